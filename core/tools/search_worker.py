"""Provides the worker process that runs the pure-Python glob and grep, so Chimera can always end them.

Python's regular expressions cannot be interrupted, and one that backtracks
catastrophically (``(a+)+$`` over a long line) runs for ages holding the
interpreter: in Chimera's own process it would freeze Ctrl-C, the time limit and
the screen. Here it runs in a process of its own that :mod:`pysearch` kills.

Run as ``python -I -m chimera.core.tools.search_worker`` with a JSON request on
stdin (see :mod:`pysearch`). Records go to stdout, each field ended by a NUL
(names and lines never hold one): ``m`` path, line number, line for a matching
line; ``f`` path for a listed file; ``p`` alone, now and then, to show it is
making progress. The worker dies with Chimera (``PR_SET_PDEATHSIG`` on Linux).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from chimera.core.tools.globbing import glob_matches
from chimera.core.tools.textsearch import search_file, searchers
from chimera.core.tools.walk import walk_files

_FLUSH_EVERY = 0.2  # seconds: how often output (or a sign of progress) reaches Chimera at least
_FLUSH_SIZE = 1 << 16
_PR_SET_PDEATHSIG = 1
_SIGKILL = 9


class _Out:
    """Records, written in batches, and a sign of progress at least every ``_FLUSH_EVERY`` seconds."""

    def __init__(self, stream: IO[bytes]) -> None:
        self.stream = stream
        self.pending: list[bytes] = []
        self.size = 0
        self.last = time.monotonic()

    def record(self, *fields: bytes) -> None:
        for data in fields:
            self.pending.append(data + b"\0")
            self.size += len(data) + 1
        if self.size >= _FLUSH_SIZE:
            self.flush()

    def alive(self) -> None:
        """Called before each piece of work: flush if it has been a while, with a progress mark if empty."""
        if time.monotonic() - self.last >= _FLUSH_EVERY:
            if not self.pending:
                self.pending.append(b"p\0")
            self.flush()

    def before_search(self) -> None:
        """Called before a block of text is searched: what was found so far reaches Chimera first.

        A search that never ends (a pattern that backtracks for ever) then still leaves its earlier lines.
        """
        if self.pending:
            self.flush()
        else:
            self.alive()

    def flush(self) -> None:
        self.stream.write(b"".join(self.pending))
        self.stream.flush()
        self.pending.clear()
        self.size = 0
        self.last = time.monotonic()


def _die_with(parent: int) -> None:
    """Be killed when Chimera dies (Linux); exit now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes

        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, _SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        sys.exit(0)


def run(request: dict[str, Any], out: _Out) -> None:
    base: str = request["base"]
    glob: str | None = request.get("glob")
    if request["mode"] == "glob":
        for relative in walk_files_of(base, request):
            out.alive()
            if glob is None or glob_matches(relative, glob):
                out.record(b"f" + os.fsencode(relative))
        return
    regex, wide = searchers(request["pattern"], request["ignore_case"])

    def searched(relative: str, path: str) -> None:
        name = b"m" + os.fsencode(relative)

        def emit(number: int, line: str) -> None:
            out.record(name, str(number).encode(), line.encode("utf-8", "surrogatepass"))

        search_file(path, regex, wide, emit, out.before_search)

    if request["single"]:
        searched("", base)
        return
    for relative in walk_files_of(base, request):
        out.alive()
        if glob is None or glob_matches(relative, glob):
            searched(relative, os.path.join(base, relative))


def walk_files_of(base: str, request: dict[str, Any]) -> Iterator[str]:
    return walk_files(Path(base), hidden=request["hidden"])


def main() -> None:
    request = json.loads(sys.stdin.buffer.read())
    _die_with(request["parent"])
    out = _Out(sys.stdout.buffer)
    run(request, out)
    out.flush()


if __name__ == "__main__":
    main()
