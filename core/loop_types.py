"""Provides the shapes the agent loop and its collaborators agree on.

``Outcome`` says how a drive ended; ``Recorder`` (the session store), ``Pins``
(workspace checkpoints) and ``LoopStrategy`` (ReAct and the others) are the
protocols the loop is given; ``RunInProgress`` is raised for a second run of a
busy loop.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from chimera.core.loop_config import LoopConfig
from chimera.core.providers.base import Message

if TYPE_CHECKING:
    from chimera.core.agent_loop import AgentLoop

__all__ = ["CONTINUE_PROMPT", "LoopStrategy", "Outcome", "Pins", "Recorder", "RunInProgress", "Stop"]

CONTINUE_PROMPT = "Your last response was cut off by the output limit. Continue exactly where it stopped."


class RunInProgress(RuntimeError):
    """``run`` was called while another run of the same loop was going."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a strategy's drive ended."""

    success: bool
    reason: str
    answer: str = ""
    error: str = ""


class Stop(Exception):
    """A guard ended the run; carries the outcome."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.error)
        self.outcome = outcome


class Recorder(Protocol):
    """Where messages are kept: the session store."""

    def record(self, kind: str, message: Message, *, sync: bool = False) -> str:
        """Keep ``message`` (``user``, ``assistant`` or ``tool_result``) as the new leaf; return its id."""
        ...

    def record_result(self, parent_id: str, block: dict[str, Any]) -> None:
        """Keep one finished tool result of the calls ``parent_id`` made, before the batch ends."""
        ...

    def children_of(self, node_id: str | None) -> int:
        """How many nodes already follow ``node_id`` (more than none: a new message branches)."""
        ...


class Pins(Protocol):
    """Where the workspace is pinned to session nodes (checkpoints)."""

    async def pin(
        self, node_id: str, wrote: Mapping[str, bool] | None = None, *, folders: Sequence[str] = ()
    ) -> str | None:
        """Snapshot the workspace and pin it to ``node_id``; the snapshot id, or None.

        ``wrote``: after a batch, the paths Chimera's ``write``/``edit`` wrote, each True when
        ``write`` created it (the only files a switch may treat as the agent's creations);
        ``folders``: the folders ``write`` made (the only ones a switch may remove).
        """
        ...

    async def tidy(self) -> None:
        """Bound the disk the snapshots take (when the session closes)."""
        ...


class LoopStrategy(Protocol):
    """A way to drive the core: ReAct, plan-and-execute, reflexion, tree of thought."""

    name: str
    config: LoopConfig

    async def drive(self, core: AgentLoop, task: str) -> Outcome:
        """Work on ``task`` through the core's primitives and say how it ended."""
        ...
