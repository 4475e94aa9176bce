"""Provides the sandbox's private temporary folders: ``make`` names each for the process that owns it, and
``sweep`` removes those a process left behind when it was killed (SIGKILL runs no clean-up of its own).

A folder is named ``chimera-sandbox-PID-START-XXXXXXXX``: PID and the tick the owner
started at (``/proc/PID/stat``'s 22nd field), so a pid reused by another process
never keeps a dead owner's folder alive. ``sweep`` looks only in one temporary folder,
and removes an entry only when all of this holds: its name has that form, it is a
folder (never followed through a link), it belongs to this user, and no process with
that pid and start time runs. Removal never follows a link inside it either
(``shutil.rmtree`` works through file descriptors on Linux).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

__all__ = ["PREFIX", "make", "sweep"]

PREFIX = "chimera-sandbox-"
_NAME = re.compile(rf"{PREFIX}(\d+)-(\d+)-[\w]+")


def _started(pid: int) -> int | None:
    """The tick process ``pid`` started at, or None when no such process runs (or /proc cannot say)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    fields = data[data.rindex(b")") + 2 :].split()
    return int(fields[19])  # field 22 of the line; fields[0] is its third


def make(root: Path | None = None) -> Path:
    """A new private temporary folder in ``root`` (None: the system's), named for this process."""
    pid = os.getpid()
    return Path(tempfile.mkdtemp(prefix=f"{PREFIX}{pid}-{_started(pid) or 0}-", dir=root))


def sweep(root: Path | None = None) -> list[Path]:
    """Remove the folders in ``root`` (None: the system's temporary folder) that processes of this user left
    behind when they died; the paths removed. Never raises: what cannot be looked at or removed is left."""
    if not os.path.isdir("/proc/self"):
        return []  # no way to tell a dead owner from a live one
    folder = root if root is not None else Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    uid = os.getuid()
    for name in names:
        match = _NAME.fullmatch(name)
        if match is None:
            continue
        path = folder / name
        try:
            info = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != uid:
            continue  # a link, a file, or someone else's: never ours to remove
        pid, started = int(match.group(1)), int(match.group(2))
        if _started(pid) == started:
            continue  # its owner still runs
        with contextlib.suppress(OSError):
            shutil.rmtree(path)
            removed.append(path)
    return removed
