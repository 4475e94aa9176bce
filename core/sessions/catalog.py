"""Provides the session catalog: what the session picker lists, kept in one small file instead of read
from every session.

``CHIMERA_HOME/session-catalog.jsonl`` holds one JSON object a line, each a patch for one session by
its id: ``{"id", "title"?, "workdir"?, "created"?, "updated"?, "active_turns"?, "size"?, "ending"?}``
(``ending``: ``{"state", "why"}`` of its last run, or null when none ran; ``size``: the bytes of its
``entries.jsonl`` the patch describes; ``active_turns``: the model's answers on its active branch, the path
from its leaf to its root, as the person saw them). Read back, the patches fold in order, a later field
winning, into one :class:`CatalogEntry` a session. A session's store adds a patch when it closes after
writing, and a live session one as each run ends (:func:`note_session`); ``listing`` rebuilds the patch of a
session the catalog lacks, describes at another size (an older home, a crash, a hand edit) or counts in the
older way (``turns``: the answers of every branch, read only while the session cannot be read again).

The file is crash-safe and untrusted. Each patch is one line appended in one write under a lock on the
file (a file that lacks its last newline gets one first, so a torn line never swallows the next); reading
ignores whatever is not a whole JSON object, a field not of its type, an id that is no session's. It is
private (0600), never opened through a link, and read from its last ``MAX_BYTES`` at most. Grown past a
few lines a session, it is rewritten, one line each, to a file renamed over it (:func:`rewrite`).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from chimera.core.errors import ChimeraError
from chimera.core.redact import Redactor
from chimera.core.sessions.files import ENTRIES, open_file
from chimera.core.sessions.jsonl import append_line
from chimera.core.sessions.locks import lock_alone
from chimera.core.sessions.records import ID, LAST_TIME
from chimera.core.sessions.tree import SessionTree
from chimera.core.strict_json import finite_number
from chimera.core.wording import Ending


class CatalogedStore(Protocol):
    """The parts of a ``SessionStore`` the catalog reads (a protocol: the store imports the catalog, not back)."""

    folder: Path
    meta: dict[str, Any]
    updated: float
    tree: SessionTree
    redactor: Redactor

    @property
    def id(self) -> str: ...

    @property
    def workdir(self) -> Path: ...

    @property
    def title(self) -> str: ...

    @property
    def on_disk(self) -> bool: ...


__all__ = [
    "CATALOG",
    "CatalogEntry",
    "active_turns",
    "entry_of",
    "note",
    "note_session",
    "read_catalog",
    "rewrite",
    "session_fields",
]

_log = logging.getLogger("chimera.sessions")

CATALOG = "session-catalog.jsonl"  # in CHIMERA_HOME, beside the sessions folder
MAX_BYTES = 8 << 20  # read at most the catalog's last 8 MB; the sessions before them are rebuilt
MAX_LINE = 64 << 10  # a longer line is no patch Chimera wrote
LOCK_WAIT = 1.0  # seconds a writer waits for another's lock before it gives up its patch
ENDING_STATES = frozenset({"finished", "interrupted", "cancelled", "failed", "unfinished"})
_COMPLETE = frozenset({"title", "workdir", "updated", "size", "ending"})


@dataclass(frozen=True, slots=True)
class CatalogEntry:
    """One session as the picker lists it. Text is as recorded (untrusted): shown through ``terminal_safe``."""

    id: str
    title: str
    workdir: str
    created: float
    updated: float
    turns: int
    """The model's answers on its active branch."""
    ending: Ending | None
    """How its last run ended (None: no run is logged)."""

    def matches(self, query: str) -> bool:
        """Whether every word of ``query`` is in the title, the workspace or the id (case aside)."""
        words = query.casefold().split()
        if not words:
            return True
        haystack = f"{self.title}\n{self.workdir}\n{self.id}".casefold()
        return all(word in haystack for word in words)


def active_turns(tree: SessionTree) -> int:
    """The model's answers on ``tree``'s active branch (the path from its leaf to its root): the turns the
    person saw, not those of branches left or variants compared."""
    return sum(1 for node in tree.path() if node.kind == "assistant")


def session_fields(store: CatalogedStore, *, size: int | None = None) -> dict[str, Any]:
    """The catalog's fields for ``store`` as it is now; ``size``: the entries' bytes read (default: now)."""
    if size is None:
        size = os.lstat(store.folder / ENTRIES).st_size
    created = store.meta.get("created")
    return {
        "title": store.title,
        "workdir": str(store.workdir),
        "created": created if isinstance(created, int | float) else 0.0,
        "updated": store.updated,
        "active_turns": active_turns(store.tree),
        "size": size,
    }


def note_session(store: CatalogedStore, ending: Ending | None = None) -> None:
    """Bring ``store``'s line of the catalog up to date (with how its last run ended, when given);
    a session not on disk yet is left out. Never raises: a catalog that cannot be written only
    costs the picker a rebuild of this session later."""
    if not store.on_disk:
        return
    try:
        fields = session_fields(store)
    except OSError:
        return
    if ending is not None:
        fields["ending"] = {"state": ending.state, "why": ending.why}
    note(store.folder.parent.parent, store.id, store.redactor.mask_value(fields))


def note(home: Path, session_id: str, fields: dict[str, Any]) -> None:
    """Append ``fields`` as a patch for ``session_id`` to the catalog of the Chimera home ``home``.

    Never raises: a failure is logged once a call and costs a rebuild of the session later."""
    line = (json.dumps({"id": session_id, **fields}, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    try:
        with _locked(home) as fd:
            append_line(fd, line)
    except (OSError, ChimeraError) as err:
        _log.warning("could not update the session catalog: %s", err)


def read_catalog(home: Path) -> tuple[dict[str, dict[str, Any]], int]:
    """Each session's patches folded into one dict (checked fields only), and how many lines the file has.

    A missing or unreadable catalog reads as empty; nothing in it can raise."""
    try:
        fd = open_file(home, CATALOG, os.O_RDONLY)
    except (OSError, ChimeraError):
        return {}, 0
    try:
        size = os.fstat(fd).st_size
        start = max(0, size - MAX_BYTES)
        data = os.pread(fd, size - start, start)
    except OSError:
        return {}, 0
    finally:
        os.close(fd)
    lines = data.split(b"\n")
    if start:
        lines = lines[1:]  # begun mid-line
    folded: dict[str, dict[str, Any]] = {}
    for value in _decoded([line for line in lines if line and len(line) <= MAX_LINE]):
        patch = _patch(value)
        if patch is not None:
            folded.setdefault(patch.pop("id"), {}).update(patch)
    return folded, len(lines)


def _decoded(lines: list[bytes]) -> list[object]:
    """The JSON values of ``lines``: all of them decoded in one go when they are all whole (a rewritten
    catalog), else line by line, leaving out each that is not JSON."""
    try:
        values = json.loads(b"[" + b",".join(lines) + b"]")
    except (ValueError, RecursionError):
        pass
    else:
        if isinstance(values, list):
            return values
    out = []
    for line in lines:
        try:
            out.append(json.loads(line))
        except (ValueError, RecursionError):
            continue
    return out


def entry_of(session_id: str, fields: dict[str, Any] | None) -> CatalogEntry | None:
    """The entry folded ``fields`` describe; None when they lack something the picker shows."""
    if fields is None or not fields.keys() >= _COMPLETE:
        return None
    ending = fields["ending"]
    return CatalogEntry(
        id=session_id,
        title=fields["title"],
        workdir=fields["workdir"],
        created=fields.get("created", 0.0),
        updated=fields["updated"],
        turns=fields.get("active_turns", fields.get("turns", 0)),
        ending=None if ending is None else Ending(ending["state"], ending["why"], ending["why"] or ending["state"]),
    )


def rewrite(home: Path, folded: Iterable[tuple[str, dict[str, Any]]]) -> None:
    """Replace the catalog by one line a session (``(id, fields)``): written aside, synced, renamed over it.

    Appends that wait for the lock meanwhile go to the new file (see :func:`_locked`). Never raises."""
    body = b"".join(
        (json.dumps({"id": sid, **fields}, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        for sid, fields in folded
    )
    aside = home / f"{CATALOG}.new"
    try:
        with _locked(home):
            with contextlib.suppress(FileNotFoundError):
                os.unlink(aside)
            fd = open_file(home, aside.name, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
            try:
                os.write(fd, body)
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(aside, home / CATALOG)
    except (OSError, ChimeraError) as err:
        _log.warning("could not rewrite the session catalog: %s", err)


@contextlib.contextmanager
def _locked(home: Path) -> Iterator[int]:
    """The catalog open to append, held alone; the file at the path now (one renamed over it meanwhile
    is opened again), so no patch is written to a file already replaced. OSError when another holds it
    past ``LOCK_WAIT`` seconds (a writer holds it for one write: something is wrong; the run goes on)."""
    for _ in range(8):
        fd = open_file(home, CATALOG, os.O_RDWR | os.O_APPEND | os.O_CREAT)
        try:
            _hold(fd, home / CATALOG)
            try:
                current = os.lstat(home / CATALOG).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                current = False
            if current:
                yield fd
                return
        finally:
            os.close(fd)
    raise OSError(f"{home / CATALOG} kept being replaced")


def _hold(fd: int, path: Path) -> None:
    """Lock ``fd`` alone, waiting at most ``LOCK_WAIT`` seconds."""
    if not lock_alone(fd, LOCK_WAIT):
        raise OSError(f"{path} stayed locked by another process for {LOCK_WAIT:g} s")


def _patch(data: object) -> dict[str, Any] | None:
    """A decoded line's patch with only the fields that are what they say; None when it names no session."""
    if not isinstance(data, dict):
        return None
    session_id = data.get("id")
    if not isinstance(session_id, str) or session_id.startswith(".") or not ID.fullmatch(session_id):
        return None
    patch: dict[str, Any] = {"id": session_id}
    for key, value in data.items():
        check = _CHECKS.get(key)
        if check is not None and (checked := check(value)) is not _BAD:
            patch[key] = checked
    return patch


_BAD = object()  # what a check gives for a value that is not what its field holds


def _text(limit: int) -> Any:
    return lambda value: value[:limit] if isinstance(value, str) else _BAD


def _time(value: object) -> object:
    when = finite_number(value)
    return when if when is not None and 0 <= when < LAST_TIME else _BAD


def _count(value: object) -> object:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 53 else _BAD


def _ending(value: object) -> object:
    """A run's ending as recorded, ``{"state", "why"}``, or None when no run is logged."""
    if value is None:
        return None
    if not isinstance(value, dict):
        return _BAD
    state, why = value.get("state"), value.get("why", "")
    if state not in ENDING_STATES or not isinstance(why, str):
        return _BAD
    return {"state": state, "why": why[:_TEXT_LIMIT]}


_TEXT_LIMIT = 200  # a title or a why: more than any line shows
_CHECKS = {
    "title": _text(_TEXT_LIMIT),
    "workdir": _text(4096),
    "created": _time,
    "updated": _time,
    "active_turns": _count,
    "turns": _count,  # the older count, of every branch's answers
    "size": _count,
    "ending": _ending,
}
