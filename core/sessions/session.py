"""Provides ``Session``: one live session, the handle every front end drives.

The workbench, the headless runner and the session commands hold a
``Session`` and talk to the engine only through it and its bus: ``run`` a
task, ``interrupt`` it, ``answer`` a question the run published (by its
request id). It owns what a session holds while it is open: the store, the
workspace and its lock, the agent, the event log, and the bus they all share.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field

from chimera.core.agent import Agent, AgentResult
from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.redact import Redactor
from chimera.core.sessions.lock import WorkspaceLock
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.store import SessionStore
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

    def interrupt(self) -> None:
        """Stop the run in progress, if any: the stream ends, tools are killed, it ends as ``interrupted``."""
        self.agent.interrupt()

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer a question the run published (a permission request, a proposed plan: ``plan`` is the
        edited text); False when it is no longer open."""
        return self.agent.answer(request_id, decision, plan)

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
