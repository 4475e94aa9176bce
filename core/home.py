"""Provides ``chimera_home``: the folder that holds all of Chimera's state.

``CHIMERA_HOME`` when set, else the platform's user data folder. Folders made
here are private to their owner (mode 0700). A folder that is a link (a
dotfiles folder linked in as ``themes``, say) is used as it is: its target is
the person's, and its mode is never changed.
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from pathlib import Path

from chimera.core.errors import ConfigError

__all__ = ["chimera_home", "private_dir"]


def chimera_home() -> Path:
    """The state folder, created private if missing."""
    configured = os.environ.get("CHIMERA_HOME")
    if configured:
        return private_dir(Path(configured).expanduser())
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return private_dir(base / "chimera")


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed; the folder itself readable by its owner only, unless it is a
    link to a folder (then it is used as it is, its target's mode untouched)."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.name != "nt":
            _make_private(path)
    except OSError as err:
        raise ConfigError(
            f"cannot use {path} for Chimera's state ({err.strerror or err}): set CHIMERA_HOME to a folder you own"
        ) from None
    return path


def _make_private(path: Path) -> None:
    """Mode 0700 on the folder ``path`` itself, never through a link (not even one swapped in meanwhile)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.ENOTDIR) and stat.S_ISLNK(os.lstat(path).st_mode):
            return  # a link: the folder it leads to is not Chimera's to change
        if err.errno != errno.EACCES:
            raise
        if not stat.S_ISLNK(os.lstat(path).st_mode):  # a folder of ours we may not read: its mode can still change
            os.chmod(path, 0o700)
        return
    try:
        os.fchmod(fd, 0o700)
    finally:
        os.close(fd)
