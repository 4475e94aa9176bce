"""Provides the checks that keep a shadow repository its own: never a link, never the person's git directory.

Checkpoints run git with ``--git-dir`` set to the shadow repository and the
workspace as the work tree. A shadow repository that is a link (to the
workspace's ``.git``, say), that holds a link (``objects`` or ``refs`` leading
elsewhere) or a ``commondir`` file (which sends git to another repository's
refs and objects), would have git write somewhere else; a work tree inside a
git directory would have a restore write hooks there. Each is refused with one
ConfigError naming the path and what to do, before git runs.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from chimera.core.errors import ConfigError

__all__ = ["check_contents", "check_git_dir", "check_places"]


def _is_git_part(part: str) -> bool:
    return part.lower() == ".git"


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def check_places(workspace: Path, git_dir: Path) -> None:
    """ConfigError unless ``git_dir`` can be a shadow repository of ``workspace``.

    ``git_dir`` itself is no link and, when it exists, a folder; it is not the workspace,
    does not hold it, and lies in no git directory of the workspace; the workspace lies in
    no git directory at all.
    """
    check_git_dir(git_dir)
    real_dir = os.path.realpath(git_dir)
    real_workspace = os.path.realpath(workspace)
    if any(_is_git_part(part) for part in Path(real_workspace).parts):
        raise ConfigError(
            f"the workspace {workspace} is inside a git directory, where Chimera never restores files: "
            "work in the project's folder instead"
        )
    if _inside(real_workspace, real_dir):
        raise ConfigError(
            f"the checkpoints {git_dir} would hold the workspace {workspace} itself: "
            "keep sessions (CHIMERA_HOME) out of the workspace's way"
        )
    if _inside(real_dir, real_workspace):
        rel = Path(os.path.relpath(real_dir, real_workspace))
        if any(_is_git_part(part) for part in rel.parts):
            raise ConfigError(
                f"the checkpoints {git_dir} lie inside the workspace's git directory, which Chimera never writes: "
                "set CHIMERA_HOME to a folder outside it"
            )


def check_git_dir(git_dir: Path) -> None:
    """ConfigError when ``git_dir`` is a link, or something other than a folder (absent is fine)."""
    try:
        info = os.lstat(git_dir)
    except FileNotFoundError:
        info = None
    except OSError as err:
        raise ConfigError(f"the checkpoints in {git_dir} cannot be used ({err.strerror or err})") from None
    if info is not None and stat.S_ISLNK(info.st_mode):
        raise ConfigError(
            f"{git_dir} is a link, and the checkpoints are never kept through one: remove the link "
            "(Chimera makes a new store)"
        )
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{git_dir} is not a folder, so it holds no checkpoints: remove it (Chimera makes a new one)")


def check_contents(git_dir: Path) -> None:
    """ConfigError when anything in the shadow repository is a link or a special file, or it has a ``commondir``."""
    if os.path.lexists(git_dir / "commondir"):
        raise ConfigError(
            f"{git_dir / 'commondir'} sends git to another repository, which checkpoints never use: "
            f"remove {git_dir} (Chimera makes a new store)"
        )
    stack = [str(git_dir)]
    while stack:
        folder = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        except OSError as err:
            raise ConfigError(f"the checkpoints in {git_dir} cannot be read ({err.strerror or err})") from None
        for entry in entries:
            if entry.is_symlink():
                raise ConfigError(
                    f"{entry.path} is a link, and the checkpoints are never kept through one: remove the link"
                )
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            elif not entry.is_file(follow_symlinks=False):
                raise ConfigError(f"{entry.path} is not a file or a folder, which git could block on: remove it")
