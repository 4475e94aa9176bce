"""Provides ``ReAct``, the default loop strategy: reason, act with tools, observe, repeat."""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.events import PlanSuggested
from chimera.core.loops.base import Core, Outcome
from chimera.core.loops.plans import looks_complex
from chimera.core.loops.strategy import Strategy
from chimera.core.messages import Prompt, prompt_text

__all__ = ["ReAct"]


@dataclass(slots=True)
class ReAct(Strategy):
    """Steps until the model answers without calling a tool, or a guard stops it."""

    name: str = "react"

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        reason = looks_complex(prompt_text(task))
        if reason is not None:
            core.emit(PlanSuggested(reason=f"the task looks like {reason}: --loop plan would plan it first"))
        await core.user_turn(task)
        while True:
            result = await core.step()
            if result.outcome is not None:
                return result.outcome
