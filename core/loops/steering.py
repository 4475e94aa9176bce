"""Provides ``SteeringQueue``: the person's words for the run going, until a turn reads them or they go back.

Words sent while a run works are delivered once, at the start of its next turn
(``AgentLoop.step``). Words that come as the run's last answer streams, or after
it, still belong to that run: the run takes one more turn to read them. Once the
run has decided it is over, the queue is *closed*: new words are refused (the
front end keeps them, or says so), and words no turn read are taken back and
handed to the person (``steering_returned``). Nothing waits in the queue for
another task. The queue opens again when the run is over.
"""

from __future__ import annotations

from chimera.core.loops.base import Steering
from chimera.core.terminal_text import is_blank

__all__ = ["SteeringQueue"]


class SteeringQueue:
    """Words waiting for the next turn of the run going, in the order sent."""

    def __init__(self) -> None:
        self._pending: list[Steering] = []
        self.closed = False  # the run has decided it is over: words sent now are refused

    def __bool__(self) -> bool:
        return bool(self._pending)

    def add(self, text: str, queue_id: str | None = None) -> bool:
        """Queue ``text`` for the next turn; False (nothing kept) when closed or blank."""
        if self.closed or is_blank(text):
            return False
        self._pending.append(Steering(text, queue_id))
        return True

    def take(self) -> list[Steering]:
        """Everything waiting, taken out of the queue."""
        taken, self._pending = self._pending, []
        return taken
