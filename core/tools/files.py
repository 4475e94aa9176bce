"""Provides ``replace_text`` (write a file's new text atomically, keeping its permission bits)
and ``open_regular`` (open a file for reading, never blocking on a FIFO or a device).

The text goes to a temporary file beside the target, which then replaces it
in one rename: a crash or a kill midway leaves the old file or the new one,
never half of each.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import BinaryIO

__all__ = ["NotRegularFile", "open_regular", "replace_text", "special_kind"]

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotRegularFile(OSError):
    """The path names a folder, a FIFO, a socket or a device: nothing a tool reads or writes as a file."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"{kind}, not a regular file")
        self.kind = kind

    def describe(self, shown: str) -> str:
        """One line for the model: ``shown`` is what, and not a regular file."""
        return f"{shown} is {self.kind}, not a regular file"


def special_kind(mode: int) -> str | None:
    """What a file of ``mode`` is, in words, unless it is a regular file (None)."""
    if stat.S_ISREG(mode):
        return None
    return next((kind for test, kind in _KINDS if test(mode)), "a special file")


def open_regular(path: str | Path, *, listed: bool = False) -> BinaryIO:
    """``path`` opened for binary reading; NotRegularFile when it is not a regular file.

    A FIFO, socket or device is never opened: the path is checked first, and
    the open file again (opened with O_NONBLOCK, so that a FIFO swapped in
    meanwhile cannot block the open either). ``listed``: a folder listing
    just said it is a regular file, so only the open file is checked.
    """
    if not listed and (kind := special_kind(os.stat(path).st_mode)) is not None:
        raise NotRegularFile(kind)
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(special_kind(mode) or "a special file")
        os.set_blocking(fd, True)
        return open(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def replace_text(path: Path, text: str) -> None:
    """Make ``path`` hold ``text`` (UTF-8, line endings as given)."""
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".chimera-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(temp, mode)
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
