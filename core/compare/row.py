"""Provides ``Row``, one variant's line of a comparison's table, and ``Tally``, which counts it from events.

A row says where the variant's branch ends (``node``, and the checkpoint that
pins its files), how it ended (``outcome``: the run's reason, ``failed`` when
it could not start or its branch could not be kept, such as on a full disk, with
why in ``error``; ``stopped`` when it was stopped), what it took
(turns, tool calls and the failed ones, tokens, cost, seconds), which files
it changed from the starting point (``files``: path, lines added, lines
removed) and what the ``--verify`` command said on its copy (``verified``:
true, false, or None when there was no command or no files to check).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from chimera.core.events import RunFinished, StepEvent, ToolCallFinished, TurnStarted, UsageReported

__all__ = ["FileChange", "Row", "Tally"]


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path a variant changed: lines added and removed (0 and 0 for a binary file)."""

    path: str
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class Row:
    """How one variant went; ``to_json`` is the row of ``compare_finished``."""

    label: str
    node: str | None
    outcome: str
    turns: int = 0
    tool_calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    files: tuple[FileChange, ...] = ()
    verified: bool | None = None
    checkpoint: str | None = None
    error: str = ""

    @property
    def success(self) -> bool:
        return self.outcome == "completed"

    def to_json(self) -> dict[str, Any]:
        row = asdict(self)
        row["files"] = [asdict(change) for change in self.files]
        return row


@dataclass
class Tally:
    """Counts a variant's run from its events, as the loop emits them (its ``handler``)."""

    turns: int = 0
    tool_calls: int = 0
    failed_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    finished: RunFinished | None = None

    def __call__(self, event: StepEvent) -> None:
        match event:
            case TurnStarted():
                self.turns += 1
            case ToolCallFinished():
                self.tool_calls += 1
                self.failed_calls += event.is_error
            case UsageReported():
                self.input_tokens += event.input_tokens + event.cache_read_tokens + event.cache_write_tokens
                self.output_tokens += event.output_tokens
                self.cost_usd += event.cost
            case RunFinished():
                self.finished = event
                self.turns = max(self.turns, event.steps)
                self.cost_usd = max(self.cost_usd, event.cost)
            case _:
                pass
