"""Provides ``resolve_session``: the session an id, or the unique beginning of one, names.

Wherever a session id is taken (``chimera --resume``, ``tree``, ``switch``,
``checkpoint``, ``replay``, ``export``, the picker) it is read here, through
:meth:`SessionStore.open`: the whole id, or as much of its beginning as tells it
apart from every other session's (as git takes a commit's). A beginning shared by
several sessions is one line naming them; one that begins none, one line saying
where the ids are listed. Hidden entries of the sessions folder (the catalog) are
never sessions.
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.sessions.records import ID

__all__ = ["resolve_session"]

SHOWN = 5  # candidates an ambiguous beginning names before counting the rest


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
        return entry.is_dir(follow_symlinks=False)
    except OSError:
        return False


def _unknown(ref: str) -> ConfigError:
    return ConfigError(f"there is no session {ref!r}: `chimera sessions` lists them")
