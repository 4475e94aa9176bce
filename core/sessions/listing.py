"""Provides ``list_sessions``: every session under ``CHIMERA_HOME/sessions``, for ``chimera sessions``.

Each session is opened read-only (see ``store``); a folder that cannot be read
as one is named with the reason, and the others are listed all the same.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.errors import ConfigError
from chimera.core.sessions.history import last_ending
from chimera.core.sessions.records import ID
from chimera.core.sessions.store import SessionStore
from chimera.core.wording import Ending

__all__ = ["SessionInfo", "list_sessions"]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of ``chimera sessions``."""

    id: str
    title: str
    workdir: str
    created: float
    updated: float
    entries: int
    leaf: str | None
    ended: Ending | None = None
    """How its last run ended (None: no run is logged)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "workdir": self.workdir,
            "created": self.created,
            "updated": self.updated,
            "entries": self.entries,
            "leaf": self.leaf,
            "last_run": None if self.ended is None else {"state": self.ended.state, "why": self.ended.why},
        }


def list_sessions(home: Path, problems: list[str] | None = None) -> list[SessionInfo]:
    """Every readable session under ``home``, most recently updated first.

    Each folder that cannot be read as a session adds one line to ``problems`` (when given)
    saying why; the others are listed all the same.
    """
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
            )
        )
    out.sort(key=lambda info: info.updated, reverse=True)
    return out


def _session_folders(home: Path) -> Iterator[Path]:
    """Every entry of the sessions folder but hidden ones (each should be a session's folder)."""
    folder = home / "sessions"
    if folder.is_dir():
        yield from sorted(p for p in folder.iterdir() if not p.name.startswith("."))
