"""Provides ``ReAct``, the default loop strategy: reason, act with tools, observe, repeat."""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.loops.base import Core, Outcome
from chimera.core.loops.context import Prompt
from chimera.core.loops.strategy import Strategy

__all__ = ["ReAct"]


@dataclass(slots=True)
class ReAct(Strategy):
    """Steps until the model answers without calling a tool, or a guard stops it."""

    name: str = "react"

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        await core.user_turn(task)
        while True:
            result = await core.step()
            if result.outcome is not None:
                return result.outcome
