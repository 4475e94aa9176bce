"""Provides ``VariantProgress``: what the compare view shows of one variant, told by its events.

It counts what the variant's run did so far (its turn, the call running now, tokens, cost, the time since
it started), holds the permission question it waits on (answered through ``Variant.answer``) and, once the
comparison gives it, the variant's ``Row``. No Textual here.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from chimera.core.compare import Row
from chimera.core.events import (
    PermissionDecided,
    PermissionRequested,
    RunFinished,
    RunStarted,
    StepEvent,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
)

__all__ = ["VariantProgress"]


@dataclass
class VariantProgress:
    """One variant's run as far as it went: counts, the call now, the question waiting, its row at the end."""

    label: str
    clock: Callable[[], float] = time.monotonic
    turn: int = 0
    calls: int = 0
    failed: int = 0
    current: str = ""  # the tool running now ("" between calls)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    started: float | None = None
    ended: float | None = None
    question: PermissionRequested | None = None
    row: Row | None = None
    stopping: bool = False
    reason: str = field(default="")  # how its run ended, before the row comes

    def apply(self, event: StepEvent) -> None:
        match event:
            case RunStarted():
                self.started = self.clock()
            case TurnStarted():
                self.turn += 1
            case ToolCallStarted():
                self.current = event.name
            case ToolCallFinished():
                self.current = ""
                self.calls += 1
                self.failed += event.is_error
            case UsageReported():
                self.input_tokens += event.input_tokens + event.cache_read_tokens + event.cache_write_tokens
                self.output_tokens += event.output_tokens
                self.cost += event.cost
            case PermissionRequested():
                self.question = event
            case PermissionDecided():
                if self.question is not None and self.question.request_id == event.request_id:
                    self.question = None
            case RunFinished():
                self.ended = self.clock()
                self.current = ""
                self.question = None
                self.reason = event.reason
            case _:
                pass

    def finish(self, row: Row) -> None:
        self.row = row
        self.question = None
        self.current = ""

    @property
    def state(self) -> str:
        """What it is doing: waiting, running, stopping, asking, or how it ended."""
        if self.row is not None:
            return self.row.outcome
        if self.question is not None:
            return "asking"
        if self.stopping:
            return "stopping"
        if self.reason:
            return self.reason
        return "running" if self.started is not None else "waiting"

    @property
    def seconds(self) -> float:
        if self.row is not None:
            return self.row.seconds
        if self.started is None:
            return 0.0
        return (self.ended if self.ended is not None else self.clock()) - self.started

    def lines(self) -> list[str]:
        """The variant's progress as a person reads it, a fact a line."""
        doing = f"calling {self.current}" if self.current else "-"
        return [
            f"turn {self.turn}   calls {self.calls} ({self.failed} failed)",
            f"now: {doing}",
            f"tokens {self.input_tokens} in / {self.output_tokens} out",
            f"${self.cost:.4f}   {self.seconds:.1f}s",
        ]
