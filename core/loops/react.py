"""Provides ``ReAct``, the default loop strategy: reason, act with tools, observe, repeat."""

from __future__ import annotations

from dataclasses import dataclass, field

from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import Core, Outcome

__all__ = ["ReAct"]


@dataclass(slots=True)
class ReAct:
    """Steps until the model answers without calling a tool, or a guard stops it."""

    config: LoopConfig = field(default_factory=LoopConfig)
    name: str = "react"

    async def drive(self, core: Core, task: str) -> Outcome:
        await core.user_turn(task)
        while True:
            result = await core.step()
            if result.outcome is not None:
                return result.outcome
