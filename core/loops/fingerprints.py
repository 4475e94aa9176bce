"""Provides ``fingerprints`` and ``falsified``: how the files a plan names looked, and whether they still do.

A plan's steps are the model's words, so the paths they name can be anything
in the workspace: a 6 GB file, a link in a loop, a FIFO, thousands of them.
Watching them must cost little whatever they are: only a regular file inside
the workspace is fingerprinted, never through a link that leads out of it; a
file up to ``WHOLE`` bytes by a digest of its bytes; a bigger one by its size,
its time of change and digests of its first and last ``ENDS`` bytes. So one
fingerprint reads at most ``WHOLE`` bytes, and the first ``WATCHED`` paths the
steps name are watched (the rest are not). A path that cannot be fingerprinted
(missing, a link loop, not a regular file) counts as absent.
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from chimera.core.loops.plans import named_paths

__all__ = ["ENDS", "WATCHED", "WHOLE", "falsified", "fingerprint", "fingerprints"]

WHOLE = 256 << 10  # bytes: a file up to this size is known by a digest of all of it
ENDS = 16 << 10  # bytes at each end of a bigger file that its fingerprint reads
WATCHED = 100  # paths watched at most: the first the steps name
_CHUNK = 1 << 16


def fingerprints(workdir: Path, steps: Iterable[str]) -> dict[str, str | None]:
    """The first ``WATCHED`` files the steps name, each with its fingerprint (None when it is missing or
    cannot be read)."""
    seen: dict[str, str | None] = {}
    for step in steps:
        for path in named_paths(step):
            if path not in seen and len(seen) < WATCHED:
                seen[path] = fingerprint(workdir, path)
    return seen


def falsified(workdir: Path, steps: Iterable[str], seen: dict[str, str | None]) -> str | None:
    """Why the plan no longer holds: a file a remaining step names that was there and went missing or changed."""
    for step in steps:
        for path in named_paths(step):
            before = seen.get(path)
            if before is None:
                continue  # not there before: a file the plan may create
            now = fingerprint(workdir, path)
            if now is None:
                return f"{path}, which the plan names, is missing"
            if now != before:
                return f"{path}, which the plan names, changed underneath"
    return None


def fingerprint(workdir: Path, path: str) -> str | None:
    """How ``path`` (relative to ``workdir``) looks now, at a bounded cost; None when it is not a readable
    regular file inside the workspace."""
    try:
        target = (workdir / path).resolve()
    except (OSError, RuntimeError):  # a link loop (RuntimeError before Python 3.13), a name too long
        return None
    if not target.is_relative_to(workdir):
        return None
    try:
        fd = os.open(target, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # a FIFO cannot block the open
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return None
        return _of_file(fd, info)
    except OSError:
        return None
    finally:
        os.close(fd)


def _of_file(fd: int, info: os.stat_result) -> str:
    size = info.st_size
    if size <= WHOLE:
        return "sha256:" + _digest(fd, 0, size)
    ends = f"{_digest(fd, 0, ENDS)}:{_digest(fd, size - ENDS, ENDS)}"
    return f"stat:{size}:{info.st_mtime_ns}:{info.st_ino}:{ends}"


def _digest(fd: int, start: int, length: int) -> str:
    """A digest of at most ``length`` bytes of ``fd`` from ``start`` (a file that shrank gives fewer)."""
    digest = hashlib.sha256()
    offset, end = start, start + length
    while offset < end:
        chunk = os.pread(fd, min(_CHUNK, end - offset), offset)
        if not chunk:
            break
        digest.update(chunk)
        offset += len(chunk)
    return digest.hexdigest()
