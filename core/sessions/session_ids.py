"""Provides ``resolve_session``: the session an id, or the unique beginning of one, names.

Wherever a session id is taken (``chimera --resume``, ``tree``, ``switch``,
``checkpoint``, ``replay``, ``export``, the picker) it is read here, through
:meth:`SessionStore.open`: the whole id, or as much of its beginning as tells it
apart from every other session's (as git takes a commit's). A beginning shared by
several sessions is one line naming them; one that begins none, one line saying
where the ids are listed. Hidden entries of the sessions folder (the catalog) are
never sessions.

A beginning resolves on the sessions' ids, as their headers record them: a folder
counts only when its name is the id it records, so a folder renamed (or copied
under another name) neither takes a beginning nor makes one ambiguous. Named
whole, such a folder is opened and refused as damaged (``SessionStore.open``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.sessions.files import ENTRIES, open_file
from chimera.core.sessions.records import ID

__all__ = ["recorded_id", "resolve_session"]

SHOWN = 5  # candidates an ambiguous beginning names before counting the rest
HEADER = 64 * 1024  # bytes of a session's first line read for its id: a header is a few hundred


def resolve_session(sessions: Path, ref: str) -> str:
    """The id of the one session in the folder ``sessions`` that ``ref`` names: its whole id, or its unique
    beginning. ConfigError, in one line, when ``ref`` names none, or begins several (named)."""
    if not ID.fullmatch(ref):
        raise _unknown(ref)
    if os.path.lexists(sessions / ref):
        return ref
    try:
        names = [entry.name for entry in os.scandir(sessions) if _candidate(entry, ref)]
    except OSError:  # no sessions folder yet: no session at all
        names = []
    if not names:
        raise _unknown(ref)
    if len(names) > 1:
        names.sort()
        shown = ", ".join(names[:SHOWN]) + (f" and {len(names) - SHOWN} more" if len(names) > SHOWN else "")
        raise ConfigError(f"{ref!r} begins {len(names)} session ids ({shown}): type more of the id")
    return names[0]


def _candidate(entry: os.DirEntry[str], ref: str) -> bool:
    if not entry.name.startswith(ref) or entry.name.startswith(".") or not ID.fullmatch(entry.name):
        return False
    try:
        if not entry.is_dir(follow_symlinks=False):
            return False
    except OSError:
        return False
    return recorded_id(Path(entry.path)) == entry.name


def recorded_id(folder: Path) -> str | None:
    """The session id the header (first line) of ``folder``'s entries records; None when it cannot be read
    or records none. The file is opened as every session file is (never through a link, never blocking)."""
    try:
        fd = open_file(folder, ENTRIES, os.O_RDONLY)
    except (OSError, ChimeraError):
        return None
    try:
        first = os.pread(fd, HEADER, 0).partition(b"\n")[0]
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        header = json.loads(first)
    except (ValueError, RecursionError):
        return None
    if not isinstance(header, dict) or header.get("t") != "meta":
        return None
    session_id = header.get("session_id")
    return session_id if isinstance(session_id, str) else None


def _unknown(ref: str) -> ConfigError:
    return ConfigError(f"there is no session {ref!r}: `chimera sessions` lists them")
