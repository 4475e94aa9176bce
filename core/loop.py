"""Provides ``ReAct``, the default loop strategy: reason, act with tools, observe, repeat."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chimera.core.loop_config import LoopConfig

if TYPE_CHECKING:
    from chimera.core.agent_loop import AgentLoop
    from chimera.core.loop_types import Outcome

__all__ = ["ReAct"]


@dataclass(slots=True)
class ReAct:
    """Turns until the model answers without calling a tool, or a limit stops it."""

    config: LoopConfig = field(default_factory=LoopConfig)
    name: str = "react"

    async def drive(self, core: AgentLoop, task: str) -> Outcome:
        return await core.react(task)
