"""Provides ``support``: which sandbox this machine can enforce, and what it cannot.

Linux's Landlock, applied by each call's supervisor (``tools/supervisor.py``), is the
mechanism: it needs no root, no setuid helper and nothing installed. ABI 1 holds the
file system rules; moving files between folders needs ABI 2 (REFER), truncation ABI 3,
the TCP rules ABI 4, and keeping a command from signalling Chimera or reaching an
abstract Unix socket ABI 6. ``CHIMERA_NO_LANDLOCK=1`` makes Chimera act as if the kernel
had none (to see the fallback, or to test it).
"""

from __future__ import annotations

import functools
import os
import sys
from dataclasses import dataclass

from chimera.core.sandbox import landlock

__all__ = ["ALWAYS_UNENFORCED", "FORCE_OFF", "Support", "support"]

FORCE_OFF = "CHIMERA_NO_LANDLOCK"
ALWAYS_UNENFORCED = (
    "UDP and Unix sockets named by a path (Landlock rules cover TCP only)",
    "listing the names in a hidden folder (its files stay unreadable)",
    "writing /dev/shm (POSIX shared memory and semaphores live there)",
    "reading another process's /proc/PID/environ and maps (Landlock stops only tracing it and its memory)",
)


@dataclass(frozen=True, slots=True)
class Support:
    """What this machine can enforce: ``mechanism`` ("" when none), its ``abi``, why there is none
    (``missing``), and what it cannot hold (``unenforced``)."""

    mechanism: str
    abi: int = 0
    missing: str = ""
    unenforced: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return bool(self.mechanism)

    def describe(self) -> str:
        """One line: the mechanism and its ABI, or why there is none."""
        if not self.available:
            return f"none ({self.missing})"
        return f"{self.mechanism} (ABI {self.abi})"


@functools.cache
def support() -> Support:
    """The sandbox this machine offers (looked up once a process; ``support.cache_clear()`` to look again)."""
    if os.environ.get(FORCE_OFF, "") not in ("", "0"):
        return Support("", missing=f"Landlock is switched off by {FORCE_OFF}")
    if not sys.platform.startswith("linux"):
        return Support("", missing=f"Landlock is Linux's, and this is {sys.platform}")
    from chimera.core.tools.shell import can_supervise

    if not can_supervise():
        return Support("", missing="the per-call supervisor cannot run here (no pidfds or /proc)")
    abi = landlock.abi()
    if abi < 1:
        return Support("", missing="this kernel offers no Landlock (5.13 or later, with Landlock in its LSM list)")
    unenforced = list(ALWAYS_UNENFORCED)
    if abi < 2:
        unenforced.append("moving files between folders (refused, as Landlock ABI 1 does)")
    if abi < 3:
        unenforced.append("truncating files outside the workspace (Landlock ABI 3)")
    if abi < 4:
        unenforced.append("the network (Landlock ABI 4 brings TCP rules)")
    if abi < 6:
        unenforced.append("signals to Chimera and abstract Unix sockets (Landlock ABI 6)")
    return Support("landlock", abi, unenforced=tuple(unenforced))
