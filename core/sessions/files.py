"""Provides opening the files of a session folder without following a link or blocking on one.

A session folder may have been crafted: copied from another machine, unpacked
from an archive, edited by hand. Chimera never writes outside it, so:

* the folder itself must be a real folder, not a link (:func:`check_folder`),
  and each name Chimera uses in it must be absent or of its kind, never a link:
  ``entries.jsonl``, ``events.jsonl`` and ``lock`` regular files,
  ``checkpoints.git`` a folder;
* every file is opened with ``O_NOFOLLOW`` (a link swapped in is refused, not
  followed) and ``O_NONBLOCK`` (a FIFO swapped in cannot block the open), and
  checked again once open: only a regular file is read or written (a FIFO
  would block, a device such as ``/dev/zero`` never ends), and one opened for
  writing must have no other name (a hard link would carry the writes elsewhere).

Whatever is wrong is one ConfigError naming the file and what to do.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.tools.files import special_kind

__all__ = ["CHECKPOINTS", "ENTRIES", "EVENTS", "LOCK", "check_folder", "check_not_link", "open_file"]

ENTRIES = "entries.jsonl"
EVENTS = "events.jsonl"
LOCK = "lock"
CHECKPOINTS = "checkpoints.git"  # the session's shadow repository of workspace snapshots
_FILES = (ENTRIES, EVENTS, LOCK)


def _link(path: Path) -> ConfigError:
    return ConfigError(
        f"{path} is a link, and Chimera never follows links in a session folder: remove the link "
        "(or replace it with the file itself)"
    )


def _not_file(path: Path, mode: int) -> ConfigError:
    kind = special_kind(mode) or "a special file"
    return ConfigError(f"{path} is {kind}, not a file: remove it (Chimera keeps only regular files there)")


def check_not_link(path: Path) -> os.stat_result | None:
    """``path``'s own status (None when absent); ConfigError when it is a link."""
    try:
        info = os.lstat(path)
    except FileNotFoundError:
        return None
    if stat.S_ISLNK(info.st_mode):
        raise _link(path)
    return info


def check_folder(folder: Path) -> bool:
    """False when ``folder`` does not exist; True when it is a real folder whose session files are sound.

    ConfigError when the folder or one of its session files is a link, or of the wrong kind.
    """
    info = check_not_link(folder)
    if info is None:
        return False
    if not stat.S_ISDIR(info.st_mode):
        raise ConfigError(f"{folder} is not a session folder (left untouched)")
    for name in _FILES:
        info = check_not_link(folder / name)
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise _not_file(folder / name, info.st_mode)
    info = check_not_link(folder / CHECKPOINTS)
    if info is not None and not stat.S_ISDIR(info.st_mode):
        raise ConfigError(
            f"{folder / CHECKPOINTS} is not a folder, so it holds no snapshots: remove it (Chimera makes a new one)"
        )
    return True


def open_file(folder: Path, name: str, flags: int, mode: int = 0o600) -> int:
    """A descriptor for ``folder/name``, never a link and never anything but a regular file.

    Opened with ``O_NOFOLLOW`` and ``O_NONBLOCK`` and checked once open, so neither a link
    nor a FIFO swapped in can be followed or block; the descriptor is then blocking as usual.
    ConfigError when it is not a regular file; OSError for anything else (absent, no permission).
    """
    path = folder / name
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    except OSError as err:
        if err.errno in (errno.ELOOP, errno.EMLINK):
            raise _link(path) from None
        if err.errno in (errno.EISDIR, errno.ENXIO, errno.ENODEV, errno.ETXTBSY):
            try:
                info = os.lstat(path)
            except OSError:
                raise err from None
            raise _not_file(path, info.st_mode) from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _not_file(path, info.st_mode)
        if flags & (os.O_WRONLY | os.O_RDWR) and info.st_nlink > 1:
            raise ConfigError(
                f"{path} has another name elsewhere (a hard link), so writing it would change that file too: "
                "replace it with a copy of its own (cp it aside, then move the copy back)"
            )
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd
