"""Provides ``Agent``, the one-call way to run a task, and the ``CodingAgent`` preset.

``Agent(provider, tools, loop).run(task, env)`` drives an :class:`AgentLoop`
that publishes every event on the agent's bus, and returns an :class:`AgentResult`.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from chimera.core.agent_loop import AgentLoop, LoopStrategy, Pins, Recorder
from chimera.core.bus import EventBus
from chimera.core.env import Environment
from chimera.core.events import RunFinished
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.permissions import PermissionPolicy
from chimera.core.providers.base import Message, Provider
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup

__all__ = ["Agent", "AgentResult", "CodingAgent"]


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


class Agent:
    """A provider, a tool set and a loop strategy, ready to run tasks.

    Args:
        provider: the model.
        tools: the tools offered (``DEFAULT_TOOLS`` when None).
        loop: the strategy (``ReAct()`` when None).
        bus: where events are published (a new bus when None).
        policy: which tool calls run, are refused, or are asked about (all run when None).
        can_ask: whether someone answers permission requests (a UI listening on the bus).
        recorder: the session that keeps every message.
        history: an earlier conversation to continue, and ``node_id`` where it stands.
        pins: where the workspace is pinned to session nodes (checkpoints).
    """

    def __init__(
        self,
        provider: Provider,
        tools: ToolGroup | None = None,
        loop: LoopStrategy | None = None,
        *,
        bus: EventBus | None = None,
        policy: PermissionPolicy | None = None,
        can_ask: bool = False,
        recorder: Recorder | None = None,
        history: list[Message] | None = None,
        node_id: str | None = None,
        pins: Pins | None = None,
    ) -> None:
        self.provider = provider
        self.recorder = recorder
        self.history = history
        self.node_id = node_id
        self.pins = pins
        self.tools = tools if tools is not None else DEFAULT_TOOLS
        self.loop: LoopStrategy = loop if loop is not None else ReAct()
        self.bus = bus if bus is not None else EventBus()
        self.policy = policy
        self.can_ask = can_ask
        self._core: AgentLoop | None = None

    def core_for(self, env: Environment, *, session_id: str | None = None) -> AgentLoop:
        """The core for ``env``: the same one across calls, so follow-ups share the conversation."""
        if self._core is None or self._core.env is not env:
            self._core = AgentLoop(
                self.provider,
                self.tools,
                env,
                strategy=self.loop,
                session_id=session_id,
                bus=self.bus,
                policy=self.policy,
                can_ask=self.can_ask,
                recorder=self.recorder,
                messages=self.history,
                node_id=self.node_id,
                pins=self.pins,
            )
        return self._core

    def answer(self, request_id: str, decision: str) -> bool:
        """Answer an open permission request of the run in progress; False when it is not open."""
        return self._core is not None and self._core.answer(request_id, decision)

    def interrupt(self) -> None:
        """Stop the run in progress, if any; it ends with reason ``interrupted``."""
        if self._core is not None:
            self._core.interrupt()

    async def run(self, task: str, env: Environment, *, session_id: str | None = None) -> AgentResult:
        """Work on ``task`` in ``env``; every event goes to the bus; return how it ended."""
        core = self.core_for(env, session_id=session_id)
        finished: RunFinished | None = None
        async with contextlib.aclosing(core.run(task)) as events:
            async for event in events:
                if isinstance(event, RunFinished):
                    finished = event
        assert finished is not None
        return AgentResult(
            success=finished.success,
            steps=finished.steps,
            cost=finished.cost,
            reason=finished.reason,
            answer=finished.answer,
            error=finished.error,
            run_id=finished.run_id,
            session_id=finished.session_id,
        )


class CodingAgent(Agent):
    """The preset for coding work: every default tool and ReAct with the default limits."""

    def __init__(self, provider: Provider, *, config: LoopConfig | None = None, bus: EventBus | None = None) -> None:
        super().__init__(provider, DEFAULT_TOOLS, ReAct(config or LoopConfig()), bus=bus)
