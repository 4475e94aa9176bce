"""Provides ``collecting_later``: a block that builds many small objects without the cyclic collector
scanning them over and over; and ``pause_until_started`` / ``started``: the same for a program's start.

Reading a session builds a few objects for every node it holds, and CPython's cyclic
collector, triggered by allocations, walks everything alive again and again as they pile
up: at 40,000 nodes about half the time went there. Nothing read from a session forms a
cycle that needs collecting, so a reader pauses the collector while it builds; then what
it built is moved out of the collector's sight (``gc.freeze``: reference counting still
frees it) instead of being walked once more, and the collector runs again (pauses nest).

A program's start is the same: the modules, classes and functions it imports live as long
as it does, yet the collector walked them again and again while the workbench started (about
a tenth of the time to its first frame). The ``chimera`` command pauses it first thing and
its front end calls ``started`` once it is up (the workbench after its first frame).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collecting_later", "pause_until_started", "started"]

_paused_for_start = False


@contextmanager
def collecting_later() -> Iterator[None]:
    """Pause the cyclic garbage collector inside the block (unless it was paused already)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()


def pause_until_started() -> None:
    """Pause the cyclic garbage collector until :func:`started` (unless it is paused already)."""
    global _paused_for_start
    if gc.isenabled():
        gc.disable()
        _paused_for_start = True


def started() -> None:
    """The program is up: what it built so far is moved out of the collector's sight, and the collector paused
    by :func:`pause_until_started` runs again. Nothing happens when it did not pause it (calling twice is fine)."""
    global _paused_for_start
    if _paused_for_start:
        _paused_for_start = False
        gc.freeze()
        gc.enable()
