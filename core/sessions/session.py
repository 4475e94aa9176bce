"""Provides ``Session``: one live session, the handle every front end drives.

The workbench and the headless runner hold a ``Session`` and talk to the
engine only through it and its bus: ``run`` a task, ``interrupt`` it,
``answer`` a question the run published (by its request id), ``switch`` to
another point with its files, ``branch`` from one, name a ``checkpoint``. It
owns what a session holds while it is open: the store, the workspace and its
lock, the agent, the event log, and the bus they all share.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from chimera.core.agent import Agent, AgentResult
from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ConfigError
from chimera.core.events import BranchCreated, CheckpointCreated, CompactionDone
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.redact import Redactor
from chimera.core.sessions.lock import WorkspaceLock
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import Named, SwitchDone, SwitchPlan, name_checkpoint, switch_to
from chimera.core.threads import use_daemon_threads

__all__ = ["Session"]


@dataclass(slots=True)
class Session:
    """A ready agent over a workspace, recording into a session; made by ``start_session``."""

    agent: Agent
    env: LocalEnvironment
    store: SessionStore
    log: SessionLog
    policy: PermissionPolicy
    demo: bool
    demo_task: str = ""
    warnings: list[str] = field(default_factory=list)
    lock: WorkspaceLock | None = None
    redactor: Redactor = field(default_factory=Redactor)  # the provider's secrets, masked in what the run writes

    @property
    def id(self) -> str:
        return self.store.id

    @property
    def bus(self) -> EventBus:
        return self.agent.bus

    @property
    def model(self) -> str:
        return self.agent.provider.model

    @property
    def loop_name(self) -> str:
        return self.agent.loop.name

    async def run(self, task: str) -> AgentResult:
        """Work on ``task`` from where the conversation stands; every event goes to the bus."""
        use_daemon_threads(asyncio.get_running_loop())  # nothing stuck in a thread keeps the process alive
        return await self.agent.arun(task, self.env, session_id=self.id)

    def interrupt(self) -> list[str]:
        """Stop the run in progress, if any: the stream ends, tools are killed, it ends as ``interrupted``.

        Returns the steering not delivered yet, so a front end can give it back to the person.
        """
        self.agent.interrupt()
        return self.agent.take_steering()

    def steer(self, text: str) -> bool:
        """Add the person's words to the run in progress: delivered once, after the current tool calls
        have their results and before the next model request. False when no run is going."""
        if not self.agent.running:
            return False
        self.agent.steer(text)
        return True

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer a question the run published (a permission request, a proposed plan: ``plan`` is the
        edited text); False when it is no longer open."""
        return self.agent.answer(request_id, decision, plan)

    def switch(self, ref: str, confirm: Callable[[SwitchPlan], bool] = lambda _: True) -> SwitchDone | None:
        """Move to ``ref`` (a node, a checkpoint or saved files' name) with its files; between runs only.

        ``confirm`` sees the plan and its preview first and may say no (then None). The
        workspace's lock is held alone while files change: refused while another run works there.
        """
        self._idle("switching")
        lock = self.lock
        if lock is not None:
            try:
                lock.exclusive()
            except ConfigError:
                lock.shared()  # a failed upgrade let go of the shared hold: take it back
                raise
        try:
            done = switch_to(self.store, ref, confirm=confirm, record=self.bus.publish)
        finally:
            if lock is not None:
                lock.shared()
        if done is not None:
            self.agent.move_to(self.store.tree.context())
        return done

    def branch(self, ref: str) -> str:
        """Continue the conversation from ``ref`` (a node or a checkpoint's name), the files left as they are.

        The next run grows a new branch there. Returns the node's id.
        """
        self._idle("branching")
        node = self.store.require(ref)
        self.store.move_leaf(node)
        self.agent.move_to(self.store.tree.context())
        self.bus.publish(BranchCreated(session_id=self.id, node_id=node, ts=time.time(), from_node=node))
        return node

    def checkpoint(self, name: str, ref: str | None = None, *, move: bool = False) -> Named:
        """Name a point (the leaf by default; there the files are pinned as they are now)."""
        named = name_checkpoint(self.store, name, ref, move=move)
        if named.snapshot is not None:
            self.bus.publish(
                CheckpointCreated(session_id=self.id, node_id=named.node, ts=time.time(), snapshot=named.snapshot)
            )
        return named

    async def compact(self, focus: str = "") -> CompactionDone | None:
        """Summarize the older part of the conversation now (between runs); the recent part stays as
        it is. ``focus``: what the summary should attend to. None when there is nothing to summarize."""
        self._idle("compacting")
        return await self.agent.compact(self.env, focus, session_id=self.id)

    def _idle(self, doing: str) -> None:
        if self.agent.running:
            raise ConfigError(f"a run is going: interrupt it or let it finish before {doing}")

    async def close(self) -> None:
        """Let readers finish, then release everything, even when one step fails."""
        async with contextlib.AsyncExitStack() as stack:
            stack.push_async_callback(self.agent.provider.aclose)
            stack.callback(self.env.close)
            if self.lock is not None:
                stack.callback(self.lock.release)
            stack.callback(self.store.close)
            stack.callback(self.log.close)
            if self.agent.pins is not None:
                stack.push_async_callback(self.agent.pins.tidy)
            await self.agent.bus.close()
