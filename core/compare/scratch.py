"""Provides ``scratch_space``: the folder a comparison makes its scratch copies in, and ``sweep``, which removes
the ones comparisons that were killed left behind.

A comparison makes one folder, ``chimera-compare-*``, in the system's temporary
folder (or the root it is given), holds an exclusive ``flock`` on it while it
runs, and removes it at its end. A comparison killed with SIGKILL (or a
workbench killed while it compared, a machine that lost power) cannot remove
its own; the kernel lets its lock go, though, so the next comparison to start
sweeps every such folder whose lock it can take. A folder whose lock is held
belongs to a comparison still running, and is left alone. Only real folders
of this user are swept: never a link, a file, or another user's folder with
the same name. A folder is made and locked before it counts as anyone's: a
sweep that takes a new folder's lock first removes it, and its maker, seeing
it gone, makes another.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

__all__ = ["PREFIX", "scratch_space", "sweep"]

PREFIX = "chimera-compare-"
_OPEN = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


@contextlib.contextmanager
def scratch_space(root: Path | None = None) -> Iterator[Path]:
    """A new folder for a comparison's copies in ``root`` (None: the system's temporary folder), held while
    the block runs and removed, with all it holds, when it ends."""
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    path, fd = _made(base)
    try:
        yield path
    finally:
        try:
            _remove(path)  # still held: no sweep can be removing it at the same time
        finally:
            os.close(fd)


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the scratch folders in ``root`` (None: the system's temporary folder) that no running comparison
    holds; the ones removed. A folder that cannot be looked at or removed is left, for a later sweep."""
    base = Path(root) if root is not None else Path(tempfile.gettempdir())
    try:
        names = [entry.name for entry in os.scandir(base) if entry.name.startswith(PREFIX)]
    except OSError:
        return []
    swept = []
    for name in sorted(names):
        with contextlib.suppress(OSError):
            if _sweep_one(base / name):
                swept.append(base / name)
    return swept


def _made(base: Path) -> tuple[Path, int]:
    """A new scratch folder in ``base`` and the descriptor that holds its lock."""
    while True:
        path = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
        fd = os.open(path, _OPEN)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # at once, unless a sweep took it first: that one removes it, then lets go
            if _same(path, fd):
                return path, fd
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)  # swept before it was held: make another


def _sweep_one(path: Path) -> bool:
    """Remove ``path`` if it is a folder of this user that no comparison holds; whether it was removed."""
    fd = os.open(path, _OPEN)  # a link or a file: OSError, and it is left alone
    try:
        if os.fstat(fd).st_uid != os.getuid():
            return False
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False  # a comparison running now holds it
        if not _same(path, fd):
            return False
        _remove(path)
        return True
    finally:
        os.close(fd)


def _same(path: Path, fd: int) -> bool:
    """Whether ``path`` is still the folder ``fd`` was opened on."""
    try:
        here = os.lstat(path)
    except FileNotFoundError:
        return False
    held = os.fstat(fd)
    return (here.st_dev, here.st_ino) == (held.st_dev, held.st_ino)


def _remove(path: Path) -> None:
    """Remove the folder ``path`` and everything in it, though a command made folders in it unwritable or
    unreadable (they are made the owner's again first); no link in it is followed."""
    with contextlib.suppress(OSError):
        os.chmod(path, stat.S_IRWXU)
        for folder, dirs, _ in os.walk(path):  # top down: each folder opened up before the walk goes in
            for name in dirs:
                inner = os.path.join(folder, name)
                with contextlib.suppress(OSError):
                    if stat.S_ISDIR(os.lstat(inner).st_mode):  # a link to a folder is removed, never changed
                        os.chmod(inner, stat.S_IRWXU)
    shutil.rmtree(path)
