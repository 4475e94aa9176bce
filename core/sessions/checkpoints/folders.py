"""Provides ``EmptiedFolders``: which folders a restore leaves empty, and which of those it may remove.

Git snapshots hold no folders, so a folder's maker is known only from what the
session recorded: the folders Chimera's ``write`` made. A folder that the
restore's deletions leave with no file in it is removed only when it is one of
those (and so is every folder left inside it); any other folder, the person's,
is kept as it is, mode and all, and the preview says so.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = ["EmptiedFolders"]

_DEEPEST = 256  # folder levels looked into; deeper, a folder counts as holding something (kept)


class EmptiedFolders:
    """The folders of ``workspace`` once the files in ``delete`` are gone; ``agent``: the folders write made."""

    def __init__(self, workspace: Path, delete: Iterable[str], agent: Iterable[str]) -> None:
        self.workspace = workspace
        self.delete = set(delete)
        self.agent = set(agent)
        self._seen: dict[str, tuple[bool, bool]] = {}  # folder -> (left with no file, removable)
        self._asked: set[str] = set()  # folders a file of the target is to replace

    def removable(self, folder: str) -> bool:
        """True when ``folder`` is the agent's and, the deletions done, holds only folders that are removable too.

        Asked about a folder in the way of a file the target holds: when True, :meth:`plan` removes it.
        """
        self._asked.add(folder)
        return self._state(folder, 0)[1]

    def plan(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """(remove, keep): the folders the deletions empty that are removed (deepest first) and kept (sorted).

        Looked at: every folder above a deleted file, and every folder :meth:`removable` was asked about.
        """
        touched = {parent for path in self.delete for parent in _parents(path)}
        for folder in touched:
            self._state(folder, 0)
        removed: set[str] = set()
        for folder in sorted(self._seen, key=lambda f: f.count("/")):  # outer folders first
            parent = folder.rpartition("/")[0]
            if self._seen[folder][1] and (folder in touched or folder in self._asked or parent in removed):
                removed.add(folder)
        kept = sorted(f for f in touched if self._seen[f][0] and f not in removed and f not in self.agent)
        return tuple(sorted(removed, key=lambda f: (-f.count("/"), f))), tuple(kept)

    def _state(self, folder: str, depth: int) -> tuple[bool, bool]:
        known = self._seen.get(folder)
        if known is not None:
            return known
        empty, removable = self._look(folder, depth)
        self._seen[folder] = (empty, removable)
        return empty, removable

    def _look(self, folder: str, depth: int) -> tuple[bool, bool]:
        if depth > _DEEPEST:
            return False, False
        try:
            entries = list(os.scandir(self.workspace / folder))
        except OSError:  # gone, unreadable, or not a folder: nothing to remove
            return False, False
        removable = folder in self.agent
        for entry in entries:
            inner = f"{folder}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                empty, inner_removable = self._state(inner, depth + 1)
                if not empty:
                    return False, False
                removable = removable and inner_removable
            elif inner not in self.delete:
                return False, False
        return True, removable


def _parents(path: str) -> list[str]:
    """The folders above a workspace-relative ``path``, nearest first (``a/b/c`` gives ``a/b``, ``a``)."""
    parts = path.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]
