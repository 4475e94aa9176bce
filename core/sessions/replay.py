"""Provides ``replay_session``: one branch of a recorded session played back through the agent loop, with no model.

The branch is the path from the root to one node (the leaf by default). It is
split into its runs at the person's prompts, so a session that was resumed, or
switched back and resumed with another task, plays each run with its own
turns: the assistant messages come back through a ``ReplayProvider``, and a run
the recording stopped before its answer (interrupted, killed, switched away
from) stops at the same node in the replay, as recorded; one whose words were
left out of the conversation (refused, declined, interrupted) ends the same
way, its words left out again. The loop, the events
and every reader behave as they did.

Tool results are the recorded ones by default, and nothing runs. With
``rerun_tools`` the tools run again, for real, in a scratch workspace that each
run starts from as the recording found it, and each result is compared with the
recorded one; the first difference stops the replay with a report of where and
how it diverged. Only calls that ran when recorded are run again, under
permissions no looser than the recording's and with nobody to ask, and only
when they stay in the scratch copy: a call that was refused, declined, skipped
or cut short then, that the recorded permissions would not let run unasked, or
whose text does not prove it stays in the scratch copy (``rerun_guard.py``:
a command is read with the permission rules' parse) keeps its recorded result
and is reported as not re-run. Comparisons ignore what changes from run to run by
nature: the workspace's own path, durations and memory addresses.

A replay masks secrets as a live run does: given the process's credentials,
every event, every re-run result (and its saved full output) has them masked,
and a re-run result is compared with its recording with both masked, so a key
a command prints again matches the ``[secret removed]`` the run recorded, and a
divergence is never reported with the key in it.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from chimera.core.agent_loop import AgentLoop
from chimera.core.bus import EventBus
from chimera.core.difflines import shown_line, split_lines
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ConfigError, ReplayDiverged
from chimera.core.events import RunFinished
from chimera.core.home import chimera_home
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import ENDED_LEAVING_OUT
from chimera.core.loops.playback import Playback
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.permissions.rule import Rule
from chimera.core.providers.pace import Pace
from chimera.core.providers.replay import RECORDING_ENDED, ReplayProvider
from chimera.core.redact import Redactor
from chimera.core.sandbox.policy import SandboxSettings
from chimera.core.sessions.checkpoints import ShadowRepo
from chimera.core.sessions.history import Logged, logged_status
from chimera.core.sessions.recorded import RecordedRun, recorded_runs
from chimera.core.sessions.rerun_guard import remove_links_out, why_it_may_leave
from chimera.core.sessions.tree import SessionTree
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup
from chimera.core.tools.base import ToolResult, describe_call
from chimera.core.tools.executor import ToolCall
from chimera.core.tools.paths import real_path
from chimera.core.tools.recorded import Recorded, Served
from chimera.core.wording import describe_left_out

__all__ = [
    "ReplayReport",
    "normalize_output",
    "recorded_policy",
    "replay_session",
    "restore_scratch",
    "why_not_rerun",
]

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")

# How calls that did not run (to their end) when recorded ended, and why they keep their recorded result.
_NEVER_RAN = {
    "refused": "it was refused when recorded",
    "declined": "the person declined it when recorded",
    "skipped": "it was not run when recorded",
    "cancelled": "it did not finish when recorded",
}
_NOTHING_RUNS = PermissionPolicy("plan", deny=(Rule("*"),))  # plain replay: every result comes from the recording


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """How a replay ended: ``reason`` is ``completed``, ``diverged`` or why it stopped.

    ``not_rerun`` says, one line a call, which calls kept their recorded result and why;
    ``stops_at`` is the node where the last run stops because its recording does;
    ``left_out`` the links of the scratch copy that led outside it and were removed.
    """

    success: bool
    reason: str
    runs: int
    checked: int
    error: str = ""
    not_rerun: tuple[str, ...] = ()
    stops_at: str | None = None
    left_out: tuple[str, ...] = ()


def normalize_output(text: str, workspace: Path) -> str:
    """``text`` with what naturally differs between runs masked."""
    text = text.replace(str(workspace), "<workspace>")
    text = _DURATION.sub("<duration>", text)
    return _ADDRESS.sub("<address>", text)


def recorded_policy(permissions: Mapping[str, Any] | None) -> PermissionPolicy:
    """The permissions a run was recorded with; for a run recorded before they were kept, ``ask`` and no rules."""
    if permissions is None:
        return PermissionPolicy("ask")
    return PermissionPolicy.build(permissions["mode"], permissions.get("allow", ()), permissions.get("deny", ()))


def why_not_rerun(
    call: ToolCall, recorded: ToolResult, policy: PermissionPolicy, tools: ToolGroup, original: Path, scratch: Path
) -> str | None:
    """Why ``call`` must keep its ``recorded`` result instead of running again in ``scratch``; None when it may run.

    ``recorded`` carries how the call ended then (its status, from the session's log)."""
    never_ran = _NEVER_RAN.get(recorded.ended)
    if never_ran is not None:
        return never_ran
    if call.name.startswith("mcp__"):
        return "an MCP server's tool: a replay never calls a server, so the recorded result stands"
    tool = tools.get(call.name)
    if tool is None:
        return None  # the executor answers an unknown tool without running anything
    outside = why_it_may_leave(call.name, call.args, scratch=scratch, original=original)
    if outside is not None:
        return outside
    decision = policy.decide(call.name, call.args, read_only=tool.read_only, workspace=scratch)
    if decision.verdict == "deny":
        return f"the permissions it was recorded with refuse it ({decision.reason})"
    if decision.verdict == "ask":
        return f"the permissions it was recorded with ({policy.mode} mode) ask first, and a replay cannot ask"
    return None


def restore_scratch(repo: ShadowRepo, commit: str, scratch: Path) -> list[str]:
    """Make ``scratch`` hold exactly the files of snapshot ``commit``; return the links it left out.

    A link that leads outside ``scratch`` is removed, so nothing run there reaches through it.
    """
    for entry in list(scratch.iterdir()):
        if entry.is_dir() and not entry.is_symlink():
            shutil.rmtree(entry)
        else:
            entry.unlink()
    repo.export(commit, scratch)
    return remove_links_out(scratch)


def _check_scratch(scratch: Path, original: Path, repo: ShadowRepo | None) -> None:
    """ConfigError unless tools can be re-run: a scratch folder that is not the workspace, and its snapshots."""
    if repo is None or real_path(scratch) == real_path(original):
        raise ConfigError("re-running the tools needs a scratch folder apart from the workspace, and its snapshots")


class _Comparer:
    """Checks each re-run result against the recording, both masked; the first difference raises ReplayDiverged."""

    def __init__(self, workspace: Path, original: Path, redactor: Redactor) -> None:
        self.recorded = Recorded()
        self.workspace = workspace
        self.original = original
        self.redactor = redactor
        self.checked = 0

    def expect(self, run: RecordedRun, *, skip: set[tuple[str, str]]) -> None:
        """Compare what ``run``'s calls give now with what they gave then, in order; ``skip`` keep their record."""
        self.recorded = Recorded((call.id, Served(result)) for key, call, result in run.placed() if key not in skip)

    def __call__(self, call: ToolCall, result: ToolResult) -> None:
        expected = self.recorded.take(call.id)
        if expected is None:
            return
        before = expected.result
        self.checked += 1
        then = normalize_output(self.redactor.mask(before.output), self.original)
        now = normalize_output(self.redactor.mask(result.output), self.workspace)
        if then != now or before.is_error != result.is_error:
            raise ReplayDiverged(_report(call, then, now))


def _report(call: ToolCall, then: str, now: str) -> str:
    old, new = split_lines(then), split_lines(now)
    line = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    recorded = f"'{shown_line(old[line])}'" if line < len(old) else "(end of output)"
    current = f"'{shown_line(new[line])}'" if line < len(new) else "(end of output)"
    argument = call.args.get("command") or call.args.get("path") or call.args.get("pattern") or ""
    return (
        f"replay diverged at call {call.id} ({call.name} {argument}), line {line + 1}: "
        f"recorded {recorded}, now {current}"
    )


def _ending(run: RecordedRun, last: bool) -> str | None:
    if run.stops_at is None:
        return None
    if run.left_out:
        return f"as recorded, at node {run.stops_at}: {describe_left_out(run.left_out)}"
    if not last:
        return f"the recorded run stops here, at node {run.stops_at}, before an answer: the next run follows"
    return f"the recording stops here, at node {run.stops_at}: nothing after it was recorded on this branch"


async def replay_session(
    tree: SessionTree,
    *,
    node_id: str | None = None,
    workspace: Path,
    original_workspace: Path,
    spill_dir: Path,
    bus: EventBus,
    rerun_tools: bool = False,
    repo: ShadowRepo | None = None,
    model: str = "replay",
    secrets: Iterable[str] = (),
    clock: Pace | None = None,
    logged: Logged | None = None,
    session_id: str | None = None,
) -> ReplayReport:
    """Play the branch of ``tree`` that ends at ``node_id`` (the leaf when None) back; events go to ``bus``.

    ``workspace`` is where re-run tools act (a scratch folder); with ``repo``, each run
    starts from the snapshot pinned at its prompt (the first needs one: ConfigError
    without). ``original_workspace`` is the path the recording used, masked in comparisons.
    ``secrets`` (the process's credentials) are masked in every event, result and comparison.
    With ``clock`` each turn takes its recorded time at the clock's speed, and holds while it
    is paused; without, the replay plays as fast as it can. ``logged`` (what the session's log holds)
    gives recorded results their duration and data (an edit's diff) and compactions their reason, so
    the replay shows them as the run did. Steering, the loop's notes and compactions come back in their
    places (``loops.playback``). Every event carries ``session_id``, the replayed session's id (a new id
    when None), so a replay's events say which session they play; each run replayed has a ``run_id`` of its
    own, and ``node_id`` is null: a replay records nothing, so its events stand at no node.
    """
    if rerun_tools:
        _check_scratch(workspace, original_workspace, repo)
    logged = logged or Logged()
    runs = recorded_runs(tree, node_id, {node: event.reason for node, event in logged.compactions.items()}, logged)
    if not runs:
        return ReplayReport(False, "empty", 0, 0, error="the session has no messages to replay")
    if rerun_tools and tree.snapshot_for(runs[0].prompt) is None:
        raise ConfigError(
            "the session has no snapshot of its start, so its tools cannot be re-run: replay it without --rerun-tools"
        )
    config = LoopConfig(max_steps=max(len(run.turns) for run in runs) + 1)  # a run ends on its recording first
    with LocalEnvironment(workspace, spill_dir=spill_dir) as env:
        every_turn = [t for run in runs for t in run.turns]
        core = AgentLoop(  # the loop masks the first provider's secrets in all it emits and runs, for every run
            ReplayProvider(every_turn, secrets=secrets),
            DEFAULT_TOOLS,
            env,
            strategy=Playback(config),
            bus=bus,
            session_id=session_id,
        )
        rerun = _Rerun(core, tree, repo, original_workspace, logged.calls) if rerun_tools and repo is not None else None
        for number, run in enumerate(runs, start=1):
            core.executor.recorded = run.served(logged.calls)
            core.strategy = Playback(config, beats=run.beats, lead=run.lead, stops=run.stops_at is not None)
            core.executor.policy = _NOTHING_RUNS
            if rerun is not None:
                await rerun.arm(run, first=number == 1)
            provider = ReplayProvider(
                run.turns,
                model=f"{model} (replay)",
                ending=_ending(run, number == len(runs)),
                ending_kind=ENDED_LEAVING_OUT.get(run.left_out, RECORDING_ENDED),
                secrets=secrets,
                clock=clock,
            )
            core.provider = provider
            finished: RunFinished | None = None
            async with contextlib.aclosing(core.run(run.task)) as events:
                async for event in events:
                    if isinstance(event, RunFinished):
                        finished = event
            assert finished is not None
            as_recorded = finished.success and run.stops_at is None
            if run.stops_at is not None and provider.remaining == 0:
                as_recorded = finished.reason in {RECORDING_ENDED, "stuck"} or (
                    bool(run.left_out) and finished.left_out == run.left_out  # its words left out, as recorded
                )
            if not as_recorded:
                return _report_of(rerun, False, finished.reason, number, error=finished.error)
    return _report_of(rerun, True, "completed", len(runs), stops_at=runs[-1].stops_at)


class _Rerun:
    """Readies each run for its tools to run again: its files, its permissions, the calls that keep their record."""

    def __init__(
        self,
        core: AgentLoop,
        tree: SessionTree,
        repo: ShadowRepo,
        original: Path,
        logged: Mapping[tuple[str, str], Mapping[str, Any]],
    ) -> None:
        self.core = core
        self.logged = logged
        self.tree = tree
        self.repo = repo
        self.original = original
        self.comparer = _Comparer(core.env.workdir, original, core.redactor)
        self.not_rerun: list[str] = []
        self.left_out: list[str] = []

    async def arm(self, run: RecordedRun, *, first: bool) -> None:
        tree, scratch = self.tree, self.core.env.workdir
        start = tree.snapshots.get(run.prompt) or (tree.snapshot_for(run.prompt) if first else None)
        if start is not None:  # the files as the recording found them at this prompt
            self.left_out += await asyncio.to_thread(restore_scratch, self.repo, start, scratch)
        policy = recorded_policy(run.permissions)
        held = set()
        for key, call, result in run.placed():
            result = replace(result, status=logged_status(self.logged.get(key, {}), result))
            why = why_not_rerun(call, result, policy, self.core.tools, self.original, scratch)
            if why is not None:
                held.add(key)
                shown = describe_call(call.name, self.core.redactor.mask_value(call.args))  # masked, then cut
                self.not_rerun.append(f"call {call.id} ({call.name} {shown}): {why}")
        executor = self.core.executor
        executor.recorded = run.served(self.logged, only=held)
        # No looser than the recording's, and nobody to ask; its commands confined to the scratch copy.
        executor.policy = replace(
            policy, sandbox=executor.policy.sandbox or SandboxSettings(chimera_home=chimera_home())
        )
        executor.observe = self.after_call
        self.comparer.expect(run, skip=held)

    def after_call(self, call: ToolCall, result: ToolResult) -> None:
        """A link out that the call's programs made is gone before the next call could follow it; then compare."""
        self.left_out += remove_links_out(self.core.env.workdir)
        self.comparer(call, result)


def _report_of(rerun: _Rerun | None, success: bool, reason: str, runs: int, **more: Any) -> ReplayReport:
    if rerun is None:
        return ReplayReport(success, reason, runs, 0, **more)
    checked, not_rerun, left_out = rerun.comparer.checked, tuple(rerun.not_rerun), tuple(rerun.left_out)
    return ReplayReport(success, reason, runs, checked, not_rerun=not_rerun, left_out=left_out, **more)
