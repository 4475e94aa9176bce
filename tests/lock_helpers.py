"""Another process (not Chimera) holding a folder's ``flock``: ``holding`` and how Chimera names it (``named``)."""

from __future__ import annotations

import contextlib
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["holding", "named"]

# Holds an flock on the folder argv[1] (LOCK_EX, or LOCK_SH with a second argument) until stdin closes.
HOLDER = (
    "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
    "fcntl.flock(fd, fcntl.LOCK_SH if len(sys.argv) > 2 else fcntl.LOCK_EX); print('held', flush=True); "
    "sys.stdin.read()"
)


@contextlib.contextmanager
def holding(folder: Path, *, shared: bool = False) -> Iterator[subprocess.Popen[str]]:
    """Another process (not Chimera) holding ``folder``'s flock until the block ends (or its stdin closes)."""
    args = [sys.executable, "-c", HOLDER, str(folder), *(["shared"] if shared else [])]
    holder = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        yield holder
    finally:
        if holder.poll() is None:
            holder.communicate("")


def named(holder: subprocess.Popen[str]) -> str:
    """How Chimera names ``holder``: its pid, then its command line."""
    return f"pid {holder.pid} ({sys.executable} -c import fcntl"
