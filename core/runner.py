"""Provides ``AgentResult`` and how a run is driven to its end: synchronously, or as an event stream.

``Agent`` uses these, and so does every strategy's own ``run(provider, tools,
context, env)`` and ``events(...)``. This module knows the loop, never a
strategy, so a strategy can reach it without importing in a circle.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from chimera.core.agent_loop import AgentLoop
from chimera.core.bus import EventBus
from chimera.core.context import Context
from chimera.core.env import Environment
from chimera.core.events import RunFinished, StepEvent
from chimera.core.loops.base import LoopStrategy
from chimera.core.messages import Prompt
from chimera.core.providers.base import Provider
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup
from chimera.core.tools.base import Tool

__all__ = ["AgentResult", "finish", "run_strategy", "run_sync", "settle", "strategy_events", "tool_group"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class AgentResult:
    """How a run ended: ``reason`` is ``completed`` on success, else why it stopped."""

    success: bool
    steps: int
    cost: float
    reason: str
    answer: str = ""
    error: str = ""
    run_id: str = ""
    session_id: str = ""

    @classmethod
    def of(cls, finished: RunFinished) -> AgentResult:
        return cls(
            success=finished.success,
            steps=finished.steps,
            cost=finished.cost,
            reason=finished.reason,
            answer=finished.answer,
            error=finished.error,
            run_id=finished.run_id,
            session_id=finished.session_id,
        )


async def finish(core: AgentLoop, prompt: Prompt, *, queued: str | None = None) -> AgentResult:
    """Run ``prompt`` on ``core`` to its end (every event goes to its bus); how it ended.

    ``queued``: the queue id of the follow-up ``prompt`` is."""
    finished: RunFinished | None = None
    async with contextlib.aclosing(core.run(prompt, queued=queued)) as events:
        async for event in events:
            if isinstance(event, RunFinished):
                finished = event
    assert finished is not None
    return AgentResult.of(finished)


async def settle(bus: EventBus | None, provider: Provider) -> None:
    """After a synchronous run: the bus's readers have seen it all, and the provider's connections,
    which belong to the event loop that is about to end, are closed."""
    if bus is not None:
        await bus.drain()
    await provider.aclose()


def run_strategy(
    strategy: LoopStrategy, provider: Provider, tools: Iterable[Tool], context: Context | Prompt, env: Environment
) -> AgentResult:
    """A strategy's synchronous ``run``: answer ``context`` (a task, or a conversation ending with the
    person's message) in ``env``; the strategy's config gives the limits, the bus and the handler."""

    async def work() -> AgentResult:
        core = _core(strategy, provider, tools, context, env)
        try:
            return await finish(core, _prompt(context))
        finally:
            await settle(core.bus, provider)

    return run_sync(work())


async def strategy_events(
    strategy: LoopStrategy, provider: Provider, tools: Iterable[Tool], context: Context | Prompt, env: Environment
) -> AsyncIterator[StepEvent]:
    """A strategy's event stream: every event of the run that answers ``context``, ending with ``run_finished``."""
    core = _core(strategy, provider, tools, context, env)
    async with contextlib.aclosing(core.run(_prompt(context))) as events:
        async for event in events:
            yield event


def _core(
    strategy: LoopStrategy, provider: Provider, tools: Iterable[Tool], context: Context | Prompt, env: Environment
) -> AgentLoop:
    earlier = context.split_prompt()[0] if isinstance(context, Context) else Context()
    return AgentLoop(
        provider, tool_group(tools), env, strategy=strategy, messages=earlier.messages, node_id=earlier.node_id
    )


def _prompt(context: Context | Prompt) -> Prompt:
    return context.split_prompt()[1] if isinstance(context, Context) else context


def tool_group(tools: ToolGroup | Iterable[Tool] | None) -> ToolGroup:
    """``tools`` as a ``ToolGroup`` (the default tools when None)."""
    if tools is None:
        return DEFAULT_TOOLS
    return tools if isinstance(tools, ToolGroup) else ToolGroup(tools)


def run_sync(work: Coroutine[Any, Any, _T]) -> _T:
    """``work`` to its end from synchronous code; inside an event loop, an error that says what to do instead."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    work.close()
    raise RuntimeError("run() is for synchronous code: inside an event loop, await arun() (or use events())")
