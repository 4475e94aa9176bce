"""Provides the two halves of a crash-safe JSON-lines file: whole-line appends and torn-tail repair.

A record is one line written in one call to an ``O_APPEND`` descriptor; a write
that fails is cut back, so no record is ever glued to the next. A process
killed in the middle of a write can still leave a last line without its
newline: :func:`set_aside_torn_tail` moves it to a ``torn-*`` file beside the
log and cuts the log back to its last whole line, reading only the file's end.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

__all__ = ["append_line", "set_aside_torn_tail", "torn_tail_start"]

_CHUNK = 65536


def append_line(fd: int, line: bytes, *, sync: bool = False) -> None:
    """Append ``line`` (ending in a newline) whole, or nothing: OSError after cutting back a partial write."""
    start = os.lseek(fd, 0, os.SEEK_END)
    try:
        written = os.write(fd, line)
        while written < len(line):  # rare: a short write; finish the record before anything else
            written += os.write(fd, line[written:])
        if sync:
            os.fsync(fd)
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def torn_tail_start(path: Path) -> int | None:
    """Where the cut-short last line of ``path`` begins, or None when the file ends with a newline (or is empty)."""
    with path.open("rb") as fh:
        end = fh.seek(0, os.SEEK_END)
        if end == 0:
            return None
        fh.seek(end - 1)
        if fh.read(1) == b"\n":
            return None
        pos = end
        while pos > 0:
            step = min(_CHUNK, pos)
            pos -= step
            fh.seek(pos)
            newline = fh.read(step).rfind(b"\n")
            if newline >= 0:
                return pos + newline + 1
        return 0


def set_aside_torn_tail(path: Path) -> str | None:
    """Move a cut-short last line of ``path`` into ``torn-<its name>-<ms>.jsonl`` beside it; a warning, or None.

    The piece set aside is fsynced before the log is cut, so nothing is lost either way.
    """
    start = torn_tail_start(path)
    if start is None:
        return None
    with path.open("r+b") as fh:
        fh.seek(start)
        torn = fh.read()
        aside = path.with_name(f"torn-{path.stem}-{int(time.time() * 1000)}.jsonl")
        fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(torn)
            out.flush()
            os.fsync(out.fileno())
        fh.truncate(start)
        fh.flush()
        os.fsync(fh.fileno())
    return f"the last record was cut short ({len(torn)} bytes); it was set aside in {aside.name}"
