"""Provides ``Strategy``: what every loop strategy shares, the seeds' constructor and ways to run.

A strategy is a short ``drive`` over the ``Core`` protocol. Each one is built as
``Name(max_steps=…, config=LoopConfig(…), …)`` and runs three ways: given to an
``Agent`` (or ``AgentLoop``), synchronously with ``run(provider, tools, context,
env)``, or as an async event stream with ``events(…)``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from chimera.core.context import Context
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import Core, Outcome
from chimera.core.messages import Prompt

if TYPE_CHECKING:
    from chimera.core.env import Environment
    from chimera.core.events import StepEvent
    from chimera.core.providers.base import Provider
    from chimera.core.runner import AgentResult
    from chimera.core.tools.base import Tool

__all__ = ["Strategy"]


@dataclass(slots=True)
class Strategy:
    """The shared part of every strategy.

    Args:
        config: the limits and hooks of a run.
        max_steps: the turn limit, when given (else ``config.max_steps``).
    """

    config: LoopConfig = field(default_factory=LoopConfig)
    max_steps: int | None = None
    name: str = ""

    def __post_init__(self) -> None:
        if self.max_steps is not None:
            self.config = dataclasses.replace(self.config, max_steps=self.max_steps)
        self.max_steps = self.config.max_steps

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        """Work on ``task`` through the core and say how it ended."""
        raise NotImplementedError

    def run(
        self, provider: Provider, tools: Iterable[Tool], context: Context | Prompt, env: Environment
    ) -> AgentResult:
        """Answer ``context`` (a task, or a conversation ending with the person's message) synchronously."""
        from chimera.core.runner import run_strategy  # reached at run time: the runner knows the loop

        return run_strategy(self, provider, tools, context, env)

    def events(
        self, provider: Provider, tools: Iterable[Tool], context: Context | Prompt, env: Environment
    ) -> AsyncIterator[StepEvent]:
        """Every event of the run that answers ``context``, as it happens, ending with ``run_finished``."""
        from chimera.core.runner import strategy_events

        return strategy_events(self, provider, tools, context, env)
