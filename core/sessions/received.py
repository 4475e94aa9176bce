"""Provides how Chimera tells a session it wrote from one it received, and what a received one must have confirmed.

A session folder can come from anywhere: a colleague, a bug report, a download,
or an edit by hand. Two things in it act without the person seeing them when it
is resumed: words queued for the next run (steering, follow-up tasks) and the
folder the agent works in. So Chimera seals what it writes itself: the session's
workdir and each queued record carry a ``vouch``, an HMAC under a key kept in
``CHIMERA_HOME`` (``vouch.key``, readable by its owner only) over what the record
says. On resume a workdir or queued words without a sound seal were not written
by this Chimera, and are confirmed first (:func:`unconfirmed`): headless, the run
is refused in one line naming the flags (``--workdir-from-session``,
``--accept-queued``, ``--drop-queued``); the workbench asks. A workdir the person
confirmed (or named with ``--workdir``) is sealed then, so it is asked once.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import stat
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chimera.core.sessions.tree import Queued
from chimera.core.terminal_text import flat, terminal_safe
from chimera.core.tools.paths import real_path
from chimera.core.wording import plural

__all__ = ["KEY_FILE", "Unconfirmed", "home_key", "seal", "sealed", "unconfirmed", "unsealed_queue"]

KEY_FILE = "vouch.key"
_KEY_BYTES = 32
_PREVIEW = 60  # characters of a queued message shown in a one-line refusal


def home_key(home: Path) -> bytes | None:
    """The key this Chimera seals its records with, made on first use; None when it cannot be kept (then nothing
    is sealed, and every session counts as received)."""
    path = home / KEY_FILE
    with contextlib.suppress(FileExistsError, OSError):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(_KEY_BYTES))
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size != _KEY_BYTES or info.st_mode & 0o077:
            return None  # not the file this Chimera made: trust nothing it would vouch for
        key = fh.read(_KEY_BYTES + 1)
    return key if len(key) == _KEY_BYTES else None


def seal(key: bytes | None, *fields: str) -> str | None:
    """The seal of ``fields`` under ``key`` (None without a key)."""
    if key is None:
        return None
    data = json.dumps(fields, ensure_ascii=False).encode("utf-8", "surrogatepass")
    return hmac.new(key, data, hashlib.sha256).hexdigest()[:32]


def sealed(key: bytes | None, vouch: object, *fields: str) -> bool:
    """Whether ``vouch`` is the seal of ``fields`` under ``key``."""
    expected = seal(key, *fields)
    return expected is not None and isinstance(vouch, str) and hmac.compare_digest(vouch, expected)


@dataclass(frozen=True, slots=True)
class Unconfirmed:
    """What a resumed session holds that this Chimera did not write, and nobody confirmed yet.

    ``workdir``: the folder it would work in, when that is not the current folder and its record
    is not sealed (None otherwise); ``queued``: the words queued in it without a seal, (kind, text).
    """

    session_id: str
    workdir: Path | None = None
    queued: tuple[tuple[str, str], ...] = ()
    sealed_workdir: bool = True  # its workdir is this Chimera's own (else: seal it once it is confirmed)

    def __bool__(self) -> bool:
        return self.workdir is not None or bool(self.queued)

    def unless(self, *, workdir: bool, queued: bool) -> Unconfirmed:
        """What is left to confirm once the person confirmed the workdir (``workdir``) or decided the queue."""
        return replace(self, workdir=None if workdir else self.workdir, queued=() if queued else self.queued)

    def questions(self) -> list[str]:
        """What to show the person, a paragraph each: the folder, then every queued message in full."""
        lines = []
        if self.workdir is not None:
            lines.append(
                f"Session {self.session_id} was not recorded by this Chimera. It works in "
                f"{terminal_safe(str(self.workdir), one_line=True)}, not in the current folder."
            )
        if self.queued:
            lines.append(f"It holds {plural(len(self.queued), 'queued message')} that this Chimera did not write:")
            lines += [f"  {kind.replace('_', '-')}: {terminal_safe(text)}" for kind, text in self.queued]
        return lines

    def refusal(self) -> str:
        """The one line a headless resume is refused with: what it holds, and the flags that decide."""
        parts = []
        if self.workdir is not None:
            parts.append(
                f"session {self.session_id} was not recorded by this Chimera and works in {self.workdir}, not the "
                "current folder: pass --workdir-from-session to let the agent work there (or --workdir naming it)"
            )
        if self.queued:
            kind, first = self.queued[0]
            shown = flat(first)
            shown = shown if len(shown) <= _PREVIEW else shown[: _PREVIEW - 1] + "…"
            more = f" and {len(self.queued) - 1} more" if len(self.queued) > 1 else ""
            parts.append(
                f"session {self.session_id} holds {plural(len(self.queued), 'queued message')} this Chimera did not "
                f"write ({kind.replace('_', '-')}: {shown!r}{more}): pass --accept-queued to run them, or "
                "--drop-queued to discard them"
            )
        return "; ".join(parts)


def unconfirmed(
    key: bytes | None, session_id: str, meta: Mapping[str, Any], queued: Mapping[str, Queued], named: Path | None
) -> Unconfirmed:
    """What a session (``meta``, ``queued``) holds that ``key`` did not seal, and nobody confirmed: its workdir,
    unless sealed, named by the person (``named``) or the current folder; its queued words without a seal."""
    workdir = Path(str(meta.get("workdir", ".")))
    unsealed = not sealed(key, meta.get("vouch"), "workdir", session_id, str(workdir))
    elsewhere = unsealed and named is None and _current_folder() != real_path(workdir)
    words = tuple((queued[q].kind, queued[q].text) for q in unsealed_queue(key, session_id, queued))
    return Unconfirmed(session_id, workdir if elsewhere else None, words, sealed_workdir=not unsealed)


def unsealed_queue(key: bytes | None, session_id: str, queued: Mapping[str, Queued]) -> list[str]:
    """The ids of the queued words ``key`` did not seal, in order."""
    return [
        queue_id
        for queue_id, q in queued.items()
        if not sealed(key, q.vouch, "queued", session_id, queue_id, q.kind, q.text)
    ]


def _current_folder() -> Path | None:
    try:
        return real_path(Path.cwd())
    except OSError:  # the current folder is gone
        return None
