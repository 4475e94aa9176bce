"""Provides ``prepare``: what a front end needs to start runs, from its options.

It picks the provider (the configured model, or the offline demo when none is
configured), opens the workspace, builds the agent and the session log. The
workbench and ``chimera run`` both start here, so the same options make the
same run in both.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from chimera.core.agent import Agent, AgentResult
from chimera.core.agent_loop import new_id
from chimera.core.bus import EventBus
from chimera.core.demo import demo_provider, demo_recording, prepare_demo_workspace
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home, private_dir
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.providers.base import Provider
from chimera.core.providers.factory import create_provider, model_configured
from chimera.core.session_log import SessionLog
from chimera.core.tool_group import DEFAULT_TOOLS

__all__ = ["LOOPS", "PERMISSION_MODES", "Launch", "RunOptions", "prepare"]

LOOPS = ("react", "plan", "reflexion", "tot")
PERMISSION_MODES = ("ask", "accept-edits", "plan", "bypass")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What the person asked for on the command line (or the workbench's settings)."""

    workdir: Path | None = None
    model: str | None = None
    loop: str = "react"
    max_turns: int = 50
    permission_mode: str = "ask"
    resume: str | None = None
    demo_pace: float = 0.0


@dataclass(slots=True)
class Launch:
    """A ready agent over a workspace, recording into a session."""

    agent: Agent
    env: LocalEnvironment
    session_id: str
    log: SessionLog
    demo: bool
    demo_task: str = ""

    @property
    def bus(self) -> EventBus:
        return self.agent.bus

    async def run(self, task: str) -> AgentResult:
        return await self.agent.run(task, self.env, session_id=self.session_id)

    async def close(self) -> None:
        await self.agent.bus.close()
        self.log.close()
        self.env.close()
        await self.agent.provider.aclose()


def _check(options: RunOptions) -> None:
    if options.loop not in LOOPS:
        raise ConfigError(f"--loop {options.loop!r} is unknown: use one of {', '.join(LOOPS)}")
    if options.loop != "react":
        raise ConfigError(f"--loop {options.loop} is not available in this version yet: use --loop react")
    if options.permission_mode not in PERMISSION_MODES:
        raise ConfigError(
            f"--permission-mode {options.permission_mode!r} is unknown: use one of {', '.join(PERMISSION_MODES)}"
        )
    if options.max_turns < 1:
        raise ConfigError(f"--max-turns must be at least 1, not {options.max_turns}")
    if options.workdir is not None and not options.workdir.is_dir():
        what = "is not a folder" if options.workdir.exists() else "does not exist"
        raise ConfigError(f"the workdir {options.workdir} {what}: pass --workdir an existing folder")
    if options.resume:
        raise ConfigError("--resume is not available in this version yet: start a new session")


def prepare(options: RunOptions) -> Launch:
    """Build the agent, workspace and session log for ``options``; raise ConfigError on bad input."""
    _check(options)
    home = chimera_home()
    session_id = new_id()
    demo = not model_configured()
    provider: Provider
    demo_task = ""
    if demo:
        provider = demo_provider(pace=options.demo_pace)
        demo_task = demo_recording().task
        workdir = prepare_demo_workspace(private_dir(home / "demo"))
    else:
        provider = create_provider(options.model)
        workdir = options.workdir if options.workdir is not None else Path.cwd()
    env = LocalEnvironment(workdir, spill_dir=private_dir(home / "output" / session_id))
    config = LoopConfig(max_steps=options.max_turns)
    agent = Agent(provider, DEFAULT_TOOLS, ReAct(config))
    log = SessionLog(home, session_id)
    agent.bus.subscribe(log, name="session-log")
    return Launch(agent=agent, env=env, session_id=session_id, log=log, demo=demo, demo_task=demo_task)
