"""Provides ``RunOptions``, what a front end asks a session for; ``Opening``, what that session will be,
known cheaply before it opens (``sessions.start`` opens it).

A front end can draw its first frame from an ``Opening`` (the workspace, the model, the strategy, the
permission mode; the demo or not, resumed or not) while the session itself (the agent, the store, the
workspace's lock, the checkpoints) opens after it. ``start_session`` starts from the same ``Opening``, so
the two never disagree. Making one checks what can be checked without opening anything (the options, the
settings file, the model's environment), so bad input is one line before anything is drawn. This module
stays light: it imports none of the session's machinery.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home
from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.sources import configured_servers
from chimera.core.option_names import LOOPS, MODES
from chimera.core.providers.choice import context_window_setting, model_configured, resolve_model, thinking_setting
from chimera.core.sandbox import MODES as SANDBOX_MODES
from chimera.core.settings import Settings, load_settings
from chimera.core.tools.paths import real_path

__all__ = ["STRATEGIES", "Opening", "RunOptions", "opening"]

STRATEGIES = ("react", "plan", "reflexion", "tot")


@dataclass(frozen=True, slots=True)
class RunOptions:
    """What the person asked for on the command line (or the workbench's settings).

    ``permission_mode`` None means the settings file's mode, else ``ask``.
    ``interactive`` says whether someone answers permission requests. For a resumed session
    this Chimera did not write (``received.py``): ``workdir_from_session`` lets the agent work in
    the folder it recorded; ``accept_queued`` runs the words queued in it, ``drop_queued`` gives them up.
    """

    workdir: Path | None = None
    model: str | None = None
    loop: str = "react"
    reflect_every: int = 3
    candidates: int = 3
    approve_plan: bool = False
    verify: str | None = None
    max_turns: int = 50
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    max_tokens: int | None = None
    max_cost: float | None = None
    max_time: float | None = None
    resume: str | None = None
    interactive: bool = False
    demo_pace: float = 0.0
    workdir_from_session: bool = False
    accept_queued: bool = False
    drop_queued: bool = False
    sandbox: str | None = None  # workspace | off; None: config.toml's, else workspace
    allow_network: bool = False
    sandbox_auto: bool = False
    mcp_config: Path | None = None  # a file of MCP servers (the mcpServers JSON), beside the settings file's


@dataclass(frozen=True, slots=True)
class Opening:
    """What the session ``options`` ask for will be: ``model`` and ``workdir`` are None where only opening it
    tells (the demo's recording and its copy of the sample project; the folder of a session resumed)."""

    options: RunOptions
    home: Path
    settings: Settings
    demo: bool
    model: str | None
    strategy: str
    mode: str
    workdir: Path | None
    mcp_servers: tuple[ServerConfig, ...] = ()  # the settings file's and --mcp-config's, read (none in the demo)

    @property
    def resume(self) -> str | None:
        return self.options.resume


def opening(options: RunOptions) -> Opening:
    """The ``Opening`` of ``options``; ConfigError for bad input that shows without opening anything."""
    check_options(options)
    home = chimera_home()
    settings = load_settings(home)
    demo = not model_configured()
    if options.resume and demo:
        raise ConfigError("--resume needs a model: set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL")
    if demo:  # the demo replays a ReAct run, on a throwaway copy where its recorded calls all run
        return Opening(options, home, settings, True, None, "react", "bypass", None)
    servers = configured_servers(settings.mcp_servers, options.mcp_config)  # a bad file is one line now
    thinking_setting(os.environ.get("CHIMERA_THINKING"))  # a bad value is one line now, not once opening
    context_window_setting(os.environ.get("CHIMERA_CONTEXT_WINDOW"))
    mode = options.permission_mode or settings.permission_mode or "ask"
    workdir = None
    if not options.resume:
        workdir = real_path(options.workdir if options.workdir is not None else Path.cwd())
    model = resolve_model(options.model)
    return Opening(options, home, settings, False, model, options.loop, mode, workdir, mcp_servers=servers)


def check_options(options: RunOptions) -> None:
    """ConfigError naming the option and the fix for options that cannot make a session."""
    if options.loop not in LOOPS:
        raise ConfigError(f"--loop {options.loop!r} is unknown: use one of {', '.join(LOOPS)}")
    if options.loop not in STRATEGIES:
        ready = ", ".join(STRATEGIES)
        raise ConfigError(f"--loop {options.loop} is not available in this version yet: use one of {ready}")
    if options.reflect_every < 1:
        raise ConfigError(f"--reflect-every must be at least 1, not {options.reflect_every}")
    if options.candidates < 1:
        raise ConfigError(f"--candidates must be at least 1, not {options.candidates}")
    if options.permission_mode is not None and options.permission_mode not in MODES:
        raise ConfigError(f"--permission-mode {options.permission_mode!r} is unknown: use one of {', '.join(MODES)}")
    for flag, rules in (("--allow", options.allow), ("--deny", options.deny)):
        for rule in rules:
            from chimera.core.permissions.rule import Rule  # (only when there are rules)
            from chimera.core.tool_group import DEFAULT_TOOLS

            try:
                Rule.parse(rule, DEFAULT_TOOLS.names)
            except ConfigError as err:
                raise ConfigError(f"{flag}: {err}") from None
    if options.sandbox is not None and options.sandbox not in SANDBOX_MODES:
        raise ConfigError(f"--sandbox {options.sandbox!r} is unknown: use one of {', '.join(SANDBOX_MODES)}")
    if options.accept_queued and options.drop_queued:
        raise ConfigError("--accept-queued and --drop-queued say opposite things: pass one of them")
    if options.max_turns < 1:
        raise ConfigError(f"--max-turns must be at least 1, not {options.max_turns}")
    if options.workdir is not None and not options.workdir.is_dir():
        what = "is not a folder" if options.workdir.exists() else "does not exist"
        raise ConfigError(f"the workdir {options.workdir} {what}: pass --workdir an existing folder")
