"""Provides workspace confinement: every path a tool touches resolves inside the workspace.

Paths are resolved with symlinks followed, so ``..``, absolute paths and links
that point out of the workspace are all refused the same way.
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera.core.errors import WorkspaceError

__all__ = ["display_path", "resolve_in_workspace"]


def resolve_in_workspace(root: Path, path: str, *, extra_roots: tuple[Path, ...] = ()) -> Path:
    """Return ``path`` resolved against ``root``; raise WorkspaceError when it leaves it.

    ``extra_roots`` are further folders the caller may read (saved tool output).
    """
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("the path is empty: give a path relative to the workspace")
    if "\x00" in path:
        raise WorkspaceError("the path contains a NUL byte")
    candidate = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
    if not candidate.is_absolute():
        candidate = root / candidate
    resolved = candidate.resolve(strict=False)
    for allowed in (root, *(r.resolve() for r in extra_roots)):
        if resolved == allowed or resolved.is_relative_to(allowed):
            return resolved
    raise WorkspaceError(f"{path!r} is outside the workspace {root}: use a path inside it (relative paths are best)")


def display_path(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` when inside it, else as given."""
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)
