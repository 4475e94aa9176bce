"""Provides ``collecting_later``: a block that builds many small objects without the cyclic collector
scanning them over and over.

Reading a session builds a few objects for every node it holds, and CPython's cyclic
collector, triggered by allocations, walks everything alive again and again as they pile
up: at 40,000 nodes about half the time went there. Nothing read from a session forms a
cycle that needs collecting, so a reader pauses the collector while it builds; then what
it built is moved out of the collector's sight (``gc.freeze``: reference counting still
frees it) instead of being walked once more, and the collector runs again (pauses nest).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collecting_later"]


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
