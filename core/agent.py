"""Provides ``Agent``, the one-call way to run a task, and the ``CodingAgent`` preset.

``Agent(provider, tools, loop).run(task, env)`` drives an :class:`AgentLoop`
that publishes every event on the agent's bus, and returns an :class:`AgentResult`;
``await agent.arun(task, env)`` is the same inside an event loop.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace

from chimera.core.agent_loop import AgentLoop, LoopStrategy, Pins, Recorder
from chimera.core.bus import EventBus
from chimera.core.context import Context
from chimera.core.env import Environment
from chimera.core.events import BranchSummarized, CompactionDone
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import Steering
from chimera.core.messages import Prompt
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.base import Message, Provider
from chimera.core.runner import AgentResult, finish, run_sync, settle, tool_group
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup
from chimera.core.tools.base import Tool

__all__ = ["Agent", "AgentResult", "CodingAgent"]


class Agent:
    """A provider, a tool set and a loop strategy, ready to run tasks.

    Args:
        provider: the model.
        tools: the tools offered, a ``ToolGroup`` or any iterable of tools (``DEFAULT_TOOLS`` when None).
        loop: the strategy (``ReAct()`` when None).
        bus: where events are published (a new bus when None).
        policy: which tool calls run, are refused, or are asked about (all run when None).
        can_ask: whether someone answers permission requests (a UI listening on the bus).
        recorder: the session that keeps every message.
        history: an earlier conversation to continue, and ``node_id`` where it stands.
        context: an earlier conversation as a session rebuilt it (instead of ``history`` and ``node_id``).
        pins: where the workspace is pinned to session nodes (checkpoints).
    """

    def __init__(
        self,
        provider: Provider,
        tools: ToolGroup | Iterable[Tool] | None = None,
        loop: LoopStrategy | None = None,
        *,
        bus: EventBus | None = None,
        policy: PermissionPolicy | None = None,
        can_ask: bool = False,
        recorder: Recorder | None = None,
        history: list[Message] | None = None,
        node_id: str | None = None,
        context: Context | None = None,
        pins: Pins | None = None,
    ) -> None:
        self.provider = provider
        self.recorder = recorder
        self.context = context if context is not None else Context.of(history or [], node_id)
        self.pins = pins
        self.tools = tool_group(tools)
        self.loop: LoopStrategy = loop if loop is not None else ReAct()
        self.bus = bus if bus is not None else self.loop.config.event_bus or EventBus()
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
                context=self.context,
                pins=self.pins,
            )
        return self._core

    @property
    def running(self) -> bool:
        return self._core is not None and self._core.running

    def move_to(self, context: Context) -> None:
        """Continue from ``context`` (the session moved: a switch, a branch); between runs only."""
        if self.running:
            raise RuntimeError("the conversation cannot move while a run is going")
        self.context = context
        if self._core is not None:
            self._core.context = context

    def use_loop(self, loop: LoopStrategy) -> None:
        """Drive the next runs with ``loop`` (between runs only)."""
        self._between_runs("the strategy")
        self.loop = loop
        if self._core is not None:
            self._core.strategy = loop

    @contextlib.contextmanager
    def using(self, loop: LoopStrategy) -> Iterator[None]:
        """Drive the runs inside the block with ``loop``, then the strategy from before again."""
        before = self.loop
        self.use_loop(loop)
        try:
            yield
        finally:
            self.loop = before
            if self._core is not None:
                self._core.strategy = before

    def use_provider(self, provider: Provider) -> None:
        """Send the next runs' requests to ``provider`` (another model; between runs only)."""
        self._between_runs("the model")
        self.provider = provider
        if self._core is not None:
            self._core.provider = provider

    def use_mode(self, mode: str) -> None:
        """Judge the next runs' tool calls in permission ``mode``, keeping every rule and every "always"
        answered so far (between runs only). ConfigError for a mode that does not exist."""
        self._between_runs("the permission mode")
        if self.policy is not None:
            self.policy = replace(self.policy, mode=mode)
        if self._core is not None:
            self._core.executor.policy = replace(self._core.executor.policy, mode=mode)

    @property
    def kept(self) -> list[str]:
        """What each "always" answered so far lets run unasked, oldest first, a line each."""
        policy = self._core.executor.policy if self._core is not None else self.policy
        return [kept.words for kept in policy.kept] if policy is not None else []

    def forget(self, index: int) -> str:
        """Take back the ``index``-th "always" (0 first; at any time: it only narrows what runs unasked);
        what it allowed. IndexError when there is none."""
        if self._core is not None:
            executor = self._core.executor
            words = executor.policy.kept[index].words
            executor.policy = executor.policy.forgetting(index)
            return words
        if self.policy is None:
            raise IndexError(index)
        words = self.policy.kept[index].words
        self.policy = self.policy.forgetting(index)
        return words

    def _between_runs(self, what: str) -> None:
        if self.running:
            raise RuntimeError(f"{what} cannot change while a run is going")

    def open_plan(self) -> str | None:
        """The request id of the plan the run in progress waits on, if any."""
        return self._core.open_plan() if self._core is not None else None

    def stop_asking(self) -> None:
        """Nobody answers questions from here on (see ``AgentLoop.stop_asking``)."""
        self.can_ask = False
        if self._core is not None:
            self._core.stop_asking()

    def steer(self, text: str, queue_id: str | None = None) -> bool:
        """Queue words for the run in progress, delivered at its next step (see ``AgentLoop.steer``);
        False when they were not taken."""
        return self._core is not None and self._core.steer(text, queue_id)

    @property
    def steerable(self) -> bool:
        """Whether words sent now reach the run in progress (see ``AgentLoop.steerable``)."""
        return self._core is not None and self._core.steerable

    def take_steering(self) -> list[Steering]:
        """The steering not delivered yet, taken back."""
        return self._core.take_steering() if self._core is not None else []

    def give_back_steering(self) -> list[Steering]:
        """The steering not delivered yet, handed back with a ``steering_returned`` event each."""
        return self._core.give_back_steering() if self._core is not None else []

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer an open question of the run in progress (see ``AgentLoop.answer``); False when it is not open."""
        return self._core is not None and self._core.answer(request_id, decision, plan)

    def interrupt(self) -> None:
        """Stop the run in progress, if any; it ends with reason ``interrupted``."""
        if self._core is not None:
            self._core.interrupt()

    async def compact(
        self, env: Environment, focus: str = "", *, session_id: str | None = None
    ) -> CompactionDone | None:
        """Summarize the older part of the conversation now, between runs (see ``AgentLoop.compact``);
        None when there is nothing older to summarize."""
        if self.running:
            raise RuntimeError("the conversation cannot be compacted while a run is going")
        core = self.core_for(env, session_id=session_id)
        done = await core.compact(focus)
        self.context = core.context
        return done

    async def carry_branch(
        self, env: Environment, left: Sequence[Message], from_node: str, *, session_id: str | None = None
    ) -> BranchSummarized:
        """Summarize ``left``, the branch the person left, into a note after the leaf, between runs (see
        ``AgentLoop.carry_branch``)."""
        if self.running:
            raise RuntimeError("a branch cannot be summarized while a run is going")
        core = self.core_for(env, session_id=session_id)
        done = await core.carry_branch(left, from_node)
        self.context = core.context
        return done

    def run(self, task: Prompt, env: Environment, *, session_id: str | None = None) -> AgentResult:
        """Work on ``task`` in ``env`` from synchronous code; every event goes to the bus; return how it ended."""

        async def work() -> AgentResult:
            try:
                return await self.arun(task, env, session_id=session_id)
            finally:
                await settle(self.bus, self.provider)

        return run_sync(work())

    async def arun(
        self, task: Prompt, env: Environment, *, session_id: str | None = None, queued: str | None = None
    ) -> AgentResult:
        """Work on ``task`` in ``env``; every event goes to the bus; return how it ended.

        ``queued``: the session's queue id of the follow-up ``task`` is."""
        return await finish(self.core_for(env, session_id=session_id), task, queued=queued)


class CodingAgent(Agent):
    """The preset for coding work: every default tool and ReAct with the default limits."""

    def __init__(self, provider: Provider, *, config: LoopConfig | None = None, bus: EventBus | None = None) -> None:
        super().__init__(provider, DEFAULT_TOOLS, ReAct(config or LoopConfig()), bus=bus)
