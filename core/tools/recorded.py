"""Provides ``Recorded``: results a replay serves instead of running the calls, in the order they were recorded.

A session knows a call by its place in the tree, not by the provider's id: a
local server numbers ids from 1 at every start, so one id may stand for several
calls. A replay plays the calls back in the order they were made, so the n-th
call served under an id gets the n-th result recorded under it, and a call that
repeats an earlier one's id never gets the earlier one's result or duration.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from chimera.core.tools.base import ToolResult

__all__ = ["Recorded", "Served"]


@dataclass(frozen=True, slots=True)
class Served:
    """A recorded result, and how long the call took then in milliseconds (None: not known)."""

    result: ToolResult
    duration_ms: float | None = None


class Recorded:
    """Recorded results by call id, each id's in the order recorded; :meth:`take` serves the next one."""

    def __init__(self, entries: Iterable[tuple[str, Served]] = ()) -> None:
        self._queues: dict[str, deque[Served]] = {}
        for call_id, served in entries:
            self._queues.setdefault(call_id, deque()).append(served)

    def take(self, call_id: str) -> Served | None:
        """The next recorded result for a call with ``call_id``, or None when none is left (the call runs)."""
        queue = self._queues.get(call_id)
        return queue.popleft() if queue else None

    def __bool__(self) -> bool:
        return any(self._queues.values())
