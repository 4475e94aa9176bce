"""Provides ``git_owned``: whether a workspace path lies inside a git directory, whatever that folder is called.

A write there is not an ordinary edit: a hook, ``config`` (``core.fsmonitor``,
aliases) or ``HEAD`` changes what the next git command runs. A git directory
is a folder named ``.git``; a folder that holds ``HEAD`` with ``objects/`` and
``refs/`` (or ``commondir``, a linked worktree's), as git itself tells one
(``git init --separate-git-dir=.gd`` makes ``.gd`` one); or the folder a
``.git`` file at the workspace root names (``gitdir: …``). A write that
would complete such a folder (the last of ``HEAD``, ``objects/``, ``refs/``)
counts too, so one cannot be built a file at a time.
"""

from __future__ import annotations

from pathlib import Path

from chimera.core.tools.paths import real_path

__all__ = ["git_owned", "names_git"]


def names_git(path: str) -> bool:
    """Whether a part of the workspace-relative ``path`` is a ``.git`` folder (in any letter case)."""
    return any(part.lower() == ".git" for part in path.split("/"))


def _completes_git_dir(folder: Path, entry: str) -> bool:
    """Whether ``folder``, once ``entry`` exists in it, looks like a git directory."""

    def has(name: str, *, directory: bool) -> bool:
        if entry == name:
            return True
        target = folder / name
        return target.is_dir() if directory else target.is_file() or target.is_symlink()

    if not has("HEAD", directory=False):
        return False
    return (has("objects", directory=True) and has("refs", directory=True)) or has("commondir", directory=False)


def _named_git_dir(workspace: Path) -> str | None:
    """The workspace-relative git directory a ``.git`` file at the workspace root names, if it is inside."""
    dot_git = workspace / ".git"
    try:
        if not dot_git.is_file() or dot_git.stat().st_size > 4096:
            return None
        text = dot_git.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = real_path(workspace / text[len("gitdir:") :].strip())
    try:
        return target.relative_to(real_path(workspace)).as_posix()
    except ValueError:
        return None


def git_owned(path: str, workspace: Path | None) -> bool:
    """Whether the normalized workspace-relative ``path`` belongs to git (see the module docstring)."""
    if names_git(path):
        return True
    if workspace is None or not path or path.startswith(("/", "../")) or path == "..":
        return False
    parts = path.split("/")
    try:
        if any(_completes_git_dir(workspace.joinpath(*parts[:n]), parts[n]) for n in range(len(parts))):
            return True
    except OSError:
        return False
    named = _named_git_dir(workspace)
    return named is not None and named != "." and (path == named or path.startswith(named + "/"))
