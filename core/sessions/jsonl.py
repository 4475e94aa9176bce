"""Provides the two halves of a crash-safe JSON-lines file: whole-line appends and last-line repair.

A record is one line written in one call to an ``O_APPEND`` descriptor; a write
that fails is cut back, and a file that does not end in a newline gets one
first, so no record is ever glued to another. A process killed in the middle
of a write can still leave a last line without its newline: :func:`repair_tail`
keeps it when it is a whole record after all (the file just ends, say after a
hand edit), adding the newline, and otherwise moves it to a ``torn-*`` file
beside the log and cuts the log back to its last whole line, reading only the
file's end. Everything works on descriptors the caller opened (see
:mod:`chimera.core.sessions.files`), so no path is opened twice.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["append_line", "is_json_object", "read_all", "repair_tail", "torn_tail_start"]

_CHUNK = 65536


def append_line(fd: int, line: bytes, *, sync: bool = False) -> None:
    """Append ``line`` (ending in a newline) whole, or nothing: OSError after cutting back a partial write.

    ``fd`` is open for reading too: when the file does not end in a newline, one is written first.
    """
    start = os.lseek(fd, 0, os.SEEK_END)
    if start > 0 and os.pread(fd, 1, start - 1) != b"\n":
        line = b"\n" + line
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


def read_all(fd: int) -> bytes:
    """Every byte of the file open at ``fd``, from its start."""
    pieces = []
    offset = 0
    while piece := os.pread(fd, 1 << 20, offset):
        pieces.append(piece)
        offset += len(piece)
    return b"".join(pieces)


def lines_backwards(fd: int) -> Iterator[bytes]:
    """The lines of the file open at ``fd``, last first (each without its newline), read a chunk at a time
    from the end: finding something near the end costs what is after it, not the whole file."""
    pos = os.fstat(fd).st_size
    tail = b""
    while pos > 0:
        step = min(_CHUNK, pos)
        pos -= step
        pieces = (os.pread(fd, step, pos) + tail).split(b"\n")
        tail = pieces[0]  # it may go on in the chunk before
        yield from (line for line in reversed(pieces[1:]) if line)
    if tail:
        yield tail


def torn_tail_start(fd: int) -> int | None:
    """Where the last line of the file at ``fd`` begins when it lacks its newline; None when it has one, or is empty."""
    end = os.fstat(fd).st_size
    if end == 0 or os.pread(fd, 1, end - 1) == b"\n":
        return None
    pos = end
    while pos > 0:
        step = min(_CHUNK, pos)
        pos -= step
        newline = os.pread(fd, step, pos).rfind(b"\n")
        if newline >= 0:
            return pos + newline + 1
    return 0


def is_json_object(line: bytes) -> bool:
    """True when ``line`` is one whole JSON object: a last line that lacks only its newline (:func:`repair_tail`)."""
    try:
        return isinstance(json.loads(line), dict)
    except (ValueError, RecursionError):
        return False


def repair_tail(fd: int, folder: Path, stem: str, keep: Callable[[bytes], bool]) -> str | None:
    """End the file at ``fd`` (open read-write) with a whole line; a warning when a piece was set aside, else None.

    A last line without its newline is kept when ``keep(line)`` says it is whole (the newline
    is then added); otherwise it is moved to ``folder/torn-<stem>-<ms>.jsonl``, fsynced before
    the file is cut back, so nothing is lost either way.
    """
    start = torn_tail_start(fd)
    if start is None:
        return None
    end = os.fstat(fd).st_size
    tail = os.pread(fd, end - start, start)
    if keep(tail):
        _append(fd, b"\n", end)  # at the end (a descriptor opened to append writes there anyway)
        os.fsync(fd)
        return None
    aside, out = _new_file(folder, f"torn-{stem}-{int(time.time() * 1000)}")
    try:
        _append(out, tail, 0)
        os.fsync(out)
    finally:
        os.close(out)
    os.ftruncate(fd, start)
    os.fsync(fd)
    return f"the last record was cut short ({len(tail)} bytes); it was set aside in {aside.name}"


def _new_file(folder: Path, name: str) -> tuple[Path, int]:
    """A file made anew in ``folder`` as ``NAME.jsonl`` (``NAME-2.jsonl``… when that is taken: two pieces set aside
    in the same millisecond), open for writing; never one that was there, never through a link."""
    for n in range(1, 1000):
        path = folder / (f"{name}.jsonl" if n == 1 else f"{name}-{n}.jsonl")
        try:
            return path, os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except FileExistsError:
            continue
    raise FileExistsError(f"no free name for {name}.jsonl in {folder}")


def _append(fd: int, data: bytes, offset: int) -> None:
    """Write all of ``data`` at ``offset`` (the end, for a descriptor opened to append)."""
    done = 0
    while done < len(data):
        done += os.pwrite(fd, data[done:], offset + done)
