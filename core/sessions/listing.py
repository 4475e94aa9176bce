"""Provides ``list_sessions``: every session under ``CHIMERA_HOME/sessions``, for ``chimera sessions``; and
``catalog_sessions``, the same from the catalog, for the session picker.

``list_sessions`` opens each session read-only (see ``store``); a folder that cannot be
read as one is named with the reason, and the others are listed all the same.
``catalog_sessions`` reads the catalog (``catalog``) and the sessions folder's names,
and opens only the sessions the catalog lacks or describes at another size than their
entries have now (rebuilding their lines): a session whose files cannot be read is
listed as the catalog last saw it. Neither lists the offline demo's sessions (``demo``:
kept for ``chimera tree`` and ``replay``, but not the person's).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.demo import demo_sessions
from chimera.core.errors import ConfigError
from chimera.core.sessions.catalog import (
    CatalogEntry,
    active_turns,
    entry_of,
    note,
    read_catalog,
    rewrite,
    session_fields,
)
from chimera.core.sessions.files import ENTRIES
from chimera.core.sessions.history import last_ending
from chimera.core.sessions.records import ID
from chimera.core.sessions.store import SessionStore, sessions_dir
from chimera.core.wording import Ending

__all__ = ["SessionInfo", "catalog_sessions", "list_sessions", "ordered", "read_sessions"]

REWRITE_ABOVE = 2  # the catalog is rewritten once it holds more than this many lines a session (and 64 more)


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of ``chimera sessions``."""

    id: str
    title: str
    workdir: str
    created: float
    updated: float
    entries: int
    """Every node of its tree, every branch's."""
    leaf: str | None
    ended: Ending | None = None
    """How its last run ended (None: no run is logged)."""
    turns: int = 0
    """The model's answers on its active branch (the path from its leaf to its root), as the person saw them."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "workdir": self.workdir,
            "created": self.created,
            "updated": self.updated,
            "entries": self.entries,
            "turns": self.turns,
            "leaf": self.leaf,
            "last_run": None if self.ended is None else {"state": self.ended.state, "why": self.ended.why},
        }


def list_sessions(home: Path, problems: list[str] | None = None) -> list[SessionInfo]:
    """Every readable session under ``home``, most recently updated first; the offline demo's left out.

    Each folder that cannot be read as a session adds one line to ``problems`` (when given)
    saying why; the others are listed all the same.
    """
    demo = demo_sessions(home)
    out = []
    for folder in _session_folders(home):
        try:
            if not folder.is_dir() or not ID.fullmatch(folder.name):
                raise ConfigError(f"{folder} is not a session folder (left untouched)")
            store = SessionStore.open(home, folder.name, writable=False)
        except ConfigError as err:
            if problems is not None:
                problems.append(str(err))
            continue
        except OSError as err:
            if problems is not None:
                problems.append(f"session {folder.name} cannot be read ({err.strerror or err}): check {folder}")
            continue
        if demo(str(store.workdir)):
            continue
        out.append(
            SessionInfo(
                id=store.id,
                title=store.title,
                workdir=str(store.workdir),
                created=float(store.meta.get("created", 0.0)),
                updated=store.updated,
                entries=len(store.tree),
                leaf=store.tree.leaf,
                ended=last_ending(store),
                turns=active_turns(store.tree),
            )
        )
    out.sort(key=lambda info: info.updated, reverse=True)
    return out


def _session_folders(home: Path) -> Iterator[Path]:
    """Every entry of the sessions folder but hidden ones (each should be a session's folder)."""
    folder = home / "sessions"
    if folder.is_dir():
        yield from sorted(p for p in folder.iterdir() if not p.name.startswith("."))


def catalog_sessions(home: Path) -> list[CatalogEntry]:
    """Every session under ``home`` as the catalog has it, most recently updated first, the offline demo's
    left out; the lines it lacks or that describe an older state are rebuilt from the session first (one
    that cannot be read keeps the line it has, or is left out)."""
    sessions = sessions_dir(home)
    folded, lines = read_catalog(home)
    out: list[CatalogEntry] = []
    for session_id in _session_names(sessions):
        fields = folded.get(session_id)
        entry = entry_of(session_id, fields)
        if entry is None or not _current(sessions, session_id, fields) or "active_turns" not in (fields or {}):
            rebuilt = _rebuild(home, session_id)
            if rebuilt is not None:
                note(home, session_id, rebuilt)
                lines += 1
                folded[session_id] = fields = {**(fields or {}), **rebuilt}
                entry = entry_of(session_id, fields)
        if entry is not None:
            out.append(entry)
    if lines > REWRITE_ABOVE * len(out) + 64:
        rewrite(home, ((entry.id, folded[entry.id]) for entry in out))  # the demo's too: no rebuild each time
    demo = demo_sessions(home)
    listed = [entry for entry in out if not demo(entry.workdir)]
    listed.sort(key=lambda entry: entry.updated, reverse=True)
    return listed


async def read_sessions(home: Path) -> list[CatalogEntry]:
    """:func:`catalog_sessions` off the event loop."""
    return await asyncio.to_thread(catalog_sessions, home)


def ordered(entries: list[CatalogEntry], workdir: str | None) -> list[CatalogEntry]:
    """``entries`` with the sessions of ``workdir`` first, each part most recently updated first."""
    return sorted(entries, key=lambda entry: (entry.workdir != workdir, -entry.updated))


def _session_names(sessions: Path) -> list[str]:
    """The names in the sessions folder that can be sessions' (not hidden, an id, a folder)."""
    try:
        scan = list(os.scandir(sessions))
    except OSError:
        return []
    names = []
    for item in scan:
        if item.name.startswith(".") or not ID.fullmatch(item.name):
            continue
        try:
            if item.is_dir(follow_symlinks=False):
                names.append(item.name)
        except OSError:
            continue
    return names


def _current(sessions: Path, session_id: str, fields: dict[str, Any] | None) -> bool:
    """Whether the catalog's line describes the session's entries as they are (same size); a session
    whose entries cannot even be looked at is taken as the catalog has it."""
    try:
        size = os.lstat(f"{sessions}/{session_id}/{ENTRIES}").st_size  # a string: a Path costs more than the call
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return fields is not None and fields.get("size") == size


def _rebuild(home: Path, session_id: str) -> dict[str, Any] | None:
    """The catalog's fields for a session, read from it; None when it cannot be read as a session."""
    try:
        size = os.lstat(sessions_dir(home) / session_id / ENTRIES).st_size  # before reading: a later append shows
        with SessionStore.open(home, session_id, writable=False) as store:
            fields = session_fields(store, size=size)
            ending = last_ending(store)
    except (ConfigError, OSError):
        return None
    fields["ending"] = None if ending is None else {"state": ending.state, "why": ending.why}
    return fields
