"""Provides ``start_session``: a live :class:`Session` from a front end's options; and ``open_session``,
which starts one off the event loop.

It picks the provider (the configured model, or the offline demo when none is
configured), opens the workspace, sets the permission policy, builds the agent
and the session log. The workbench and ``chimera run`` both start here, so the
same options make the same run in both.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from pathlib import Path

from chimera.core.agent import Agent
from chimera.core.agent_loop import new_id
from chimera.core.demo import demo_provider, demo_recording, demo_workspaces, prepare_demo_workspace
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.home import chimera_home, private_dir
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import LoopStrategy
from chimera.core.mcp.servers import DEFAULT_WINDOW, McpServers
from chimera.core.mcp.trust import WorkspaceServers, workspace_servers
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.base import Provider
from chimera.core.providers.factory import create_provider, model_configured
from chimera.core.redact import Redactor
from chimera.core.sandbox.choice import choose_sandbox
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.opening import Opening, RunOptions, opening
from chimera.core.sessions.pins import WorkspacePins
from chimera.core.sessions.reading import model_context
from chimera.core.sessions.received import Unconfirmed
from chimera.core.sessions.session import Session
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import interrupted_switch
from chimera.core.sessions.workspace_lock import LockWait, WorkspaceLock
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.executor import NOT_FINISHED
from chimera.core.tools.paths import real_path

__all__ = ["RunOptions", "check_can_resume", "open_session", "start_session", "unconfirmed"]


def _strategy(options: RunOptions, config: LoopConfig) -> LoopStrategy:
    """The strategy ``options`` name; the others are imported only when asked for (``/loop`` may later)."""
    if options.loop == "plan":
        from chimera.core.loops.plan_execute import PlanAndExecute

        return PlanAndExecute(config, approve=options.approve_plan, verify=options.verify)
    if options.loop == "reflexion":
        from chimera.core.loops.reflexion import Reflexion

        return Reflexion(config, reflect_every=options.reflect_every, verify=options.verify)
    if options.loop == "tot":
        from chimera.core.loops.tree_of_thought import TreeOfThought

        return TreeOfThought(config, n_candidates=options.candidates)
    return ReAct(config)


def _config(options: RunOptions) -> LoopConfig:
    return LoopConfig(
        max_steps=options.max_turns,
        token_budget=options.max_tokens,
        cost_budget=options.max_cost,
        time_limit=options.max_time,
    )


def start_session(options: RunOptions, start: Opening | None = None, waiting: LockWait | None = None) -> Session:
    """Build the agent, workspace and session for ``options`` (``start``: their ``Opening``, when a front end
    made it already); raise ConfigError on bad input. ``waiting`` follows a wait for the workspace's lock
    (see ``WorkspaceLock.shared``)."""
    if start is None:
        start = opening(options)
    home, settings, demo = start.home, start.settings, start.demo
    servers = start.mcp_servers
    sandbox, sandbox_note = choose_sandbox(
        options.sandbox, options.allow_network, settings, home, auto=options.sandbox_auto
    )
    provider: Provider
    demo_task = ""
    if demo:
        # The demo works on a throwaway copy, so its recorded tool calls all run (confined to it).
        policy = PermissionPolicy(start.mode, sandbox=sandbox)
        provider = demo_provider(pace=options.demo_pace)
        demo_task = demo_recording().task
    else:
        policy = PermissionPolicy.build(
            start.mode,
            allow=(*settings.allow, *options.allow),
            deny=(*settings.deny, *options.deny),
            tools=DEFAULT_TOOLS.names,
            home=home,
            sandbox=sandbox,
        )
        provider = create_provider(start.model)
    config = _config(options)
    thinking = getattr(provider, "thinking", None) or {}
    if thinking.get("budget_tokens", 0) >= config.max_tokens:
        raise ConfigError(
            f"CHIMERA_THINKING={thinking['budget_tokens']} must be below the response limit of "
            f"{config.max_tokens} tokens: choose a smaller budget"
        )
    redactor = Redactor(getattr(provider, "secrets", ()))
    store = _session(home, options, provider.model, demo=demo, workdir=start.workdir)
    store.redactor = redactor
    warnings = [*store.warnings, *([sandbox_note] if sandbox_note else [])]
    lock = WorkspaceLock(home, store.workdir)
    try:
        lock.shared(options.max_time, waiting)
        env = LocalEnvironment(store.workdir, spill_dir=private_dir(home / "output") / store.id)
        # The servers' logs lie with the session's saved output, in Chimera's private state.
        project = _project_servers(store.workdir, home, warnings) if options.interactive and not demo else None
        if project is not None and project.confirmed:
            servers = (*servers, *(s for s in project.servers if s.name not in {c.name for c in servers}))
        mcp = None
        if servers or project is not None:
            window = getattr(provider, "context_window", None) or DEFAULT_WINDOW
            threshold = settings.mcp_search_threshold
            mcp = McpServers(
                servers, env.spill_dir, store.workdir, DEFAULT_TOOLS.names, window=window, search_threshold=threshold
            )
        pins = _pins(store, warnings)
        if store.tree.open_calls():
            _close_open_calls(store, pins)
        store.set_permissions(policy)  # what the runs from here may do: a replay re-runs no more
        agent = Agent(
            provider,
            DEFAULT_TOOLS if mcp is None else DEFAULT_TOOLS.with_extra(lambda: mcp.tools, mcp.refresh),
            ReAct(config) if demo else _strategy(options, config),  # the demo replays a ReAct run
            policy=policy,
            can_ask=options.interactive,
            recorder=store,
            context=model_context(store.tree),
            pins=pins,
        )
        log = SessionLog(store.folder, redactor=redactor, deferred=None if store.on_disk else store.ensure_on_disk)
        if log.warning is not None:
            warnings.append(f"events.jsonl: {log.warning}")
    except BaseException:
        lock.release()
        store.close()
        raise
    agent.bus.subscribe(log, name="session-log", skip=SessionLog.SKIPPED)
    return Session(
        agent=agent,
        env=env,
        store=store,
        log=log,
        policy=policy,
        demo=demo,
        demo_task=demo_task,
        warnings=warnings,
        lock=lock,
        redactor=redactor,
        strategy_for=lambda name: _strategy(replace(options, loop=name), config),
        summarize_left_default=settings.summarize_left,
        mcp=mcp,
        mcp_unconfirmed=project if project is not None and not project.confirmed else None,
    )


def _project_servers(workdir: Path, home: Path, warnings: list[str]) -> WorkspaceServers | None:
    """The workspace's own ``.mcp.json`` (the workbench asks before a server of it starts); a bad one is a warning
    at start, not a reason the workbench cannot open."""
    try:
        return workspace_servers(workdir, home)
    except ConfigError as err:
        warnings.append(f"{err} (its servers are not used)")
        return None


def check_can_resume() -> None:
    """ConfigError unless a session can be resumed here: that needs a model (the demo only plays its own)."""
    if not model_configured():  # (as ``opening`` checks it)
        raise ConfigError("--resume needs a model: set ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL")


def _pins(store: SessionStore, warnings: list[str]) -> WorkspacePins | None:
    """The session's checkpoints: a shadow repository in the session folder; None without git."""
    try:
        return WorkspacePins(store.checkpoints(), store)
    except ChimeraError as err:
        warnings.append(f"checkpoints are off: {err}")
        return None


def _session(home: Path, options: RunOptions, model: str, *, demo: bool, workdir: Path | None) -> SessionStore:
    """The session to record into: the one to resume, or a new one (on disk from its first record) working in
    ``workdir`` (the demo's in a new copy of the sample project)."""
    if not options.resume:
        if workdir is None:  # the demo
            workdir = prepare_demo_workspace(demo_workspaces(home))
        # Nothing is written until the first task: a workbench quit before one leaves no session behind.
        return SessionStore.create(home, new_id(), workdir=workdir, model=model, deferred=True)
    store = SessionStore.open(home, options.resume)
    try:
        _check_resumable(store, options.workdir)
        _confirm_received(store, options)
    except BaseException:
        store.close()
        raise
    return store


def unconfirmed(options: RunOptions) -> Unconfirmed:
    """What the session ``options`` resume holds that this Chimera did not write and the options do not decide:
    for a front end to show and ask about before starting it (nothing is written)."""
    if not options.resume:
        return Unconfirmed("")
    with SessionStore.open(chimera_home(), options.resume, writable=False) as store:
        pending = store.unconfirmed(options.workdir)
    return pending.unless(workdir=options.workdir_from_session, queued=options.accept_queued or options.drop_queued)


def _confirm_received(store: SessionStore, options: RunOptions) -> None:
    """Refuse, naming the flags, to resume what this Chimera did not write and nobody confirmed; else take it on:
    the workdir is sealed as this Chimera's, the declined queued words are given up."""
    pending = store.unconfirmed(options.workdir)
    left = pending.unless(workdir=options.workdir_from_session, queued=options.accept_queued or options.drop_queued)
    if left:
        raise ConfigError(left.refusal())
    if not pending.sealed_workdir:
        store.set_workdir(store.workdir)  # confirmed (named, worked in, or --workdir-from-session): ours now
    if options.drop_queued:
        store.drop_unsealed_queue()


def _check_resumable(store: SessionStore, workdir: Path | None) -> None:
    if store.tree.pending_switch is not None:
        raise ConfigError(interrupted_switch(store))
    if workdir is not None and real_path(workdir) != real_path(store.workdir):
        if store.workdir.is_dir():
            raise ConfigError(
                f"session {store.id} works in {store.workdir}, which still exists: "
                "resume it there (leave out --workdir)"
            )
        if not workdir.is_dir():
            raise ConfigError(f"the workdir {workdir} does not exist: pass --workdir an existing folder")
        store.set_workdir(real_path(workdir))  # the folder moved: follow it
    elif not store.workdir.is_dir():
        raise ConfigError(
            f"the workspace of session {store.id}, {store.workdir}, is no longer there: "
            "pass --workdir with the folder it moved to"
        )


def _close_open_calls(store: SessionStore, pins: WorkspacePins | None) -> None:
    """Answer the leaf's unanswered tool calls (the process died mid-batch, or the person moved back).

    Calls that finished keep their recorded results; the rest are answered as not run.
    The files as they are now are pinned to the answer, marked as found: what the calls
    left is mixed with whatever the person did since, so a switch deletes none of it.
    """
    leaf = store.tree.leaf
    assert leaf is not None
    finished = {b["tool_use_id"]: b for b in store.tree.partials.get(leaf, [])}
    results = [
        finished.get(call_id)
        or {"type": "tool_result", "tool_use_id": call_id, "content": NOT_FINISHED, "is_error": True}
        for call_id in store.tree.open_calls()
    ]
    node = store.add("tool_result", {"role": "user", "content": results}, sync=True)
    if pins is not None:
        with contextlib.suppress(ChimeraError, OSError):
            store.pin(node.id, pins.repo.snapshot(), found=True)


async def open_session(start: Opening, waiting: LockWait | None = None) -> Session:
    """The session ``start`` describes, opened in a thread (its imports, files, git and lock are blocking work);
    ``waiting`` follows a wait for the workspace's lock (see ``WorkspaceLock.shared``)."""
    return await asyncio.to_thread(start_session, start.options, start, waiting)
