"""Provides ``replay_session``: one branch of a recorded session played back through the agent loop, with no model.

The branch is the path from the root to one node (the leaf by default). It is
split into its runs at the person's prompts, so a session that was resumed, or
switched back and resumed with another task, plays each run with its own
turns: the assistant messages come back through a ``ReplayProvider``, and a run
the recording stopped before its answer (interrupted, killed, switched away
from) stops at the same node in the replay, as recorded. The loop, the events
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
import math
import re
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.agent_loop import AgentLoop
from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ConfigError, ReplayDiverged
from chimera.core.events import RunFinished
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.context import content_blocks, is_continue_prompt, is_loop_note
from chimera.core.permissions.policy import PermissionPolicy, Rule
from chimera.core.providers.pace import Pace
from chimera.core.providers.replay import RECORDING_ENDED, RecordedTurn, ReplayProvider
from chimera.core.redact import Redactor
from chimera.core.sessions.checkpoints import ShadowRepo
from chimera.core.sessions.rerun_guard import remove_links_out, why_it_may_leave
from chimera.core.sessions.tree import Node, SessionTree
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup
from chimera.core.tools.base import ToolResult, describe_call
from chimera.core.tools.executor import NOT_FINISHED, UNFINISHED_PREFIX, ToolCall
from chimera.core.tools.paths import real_path

__all__ = [
    "RecordedRun",
    "ReplayReport",
    "normalize_output",
    "recorded_policy",
    "recorded_runs",
    "replay_session",
    "restore_scratch",
    "why_not_rerun",
]

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")

# The results of calls that did not run when recorded, as the executor words them (after "Error: ").
_NEVER_RAN = (
    ("not permitted:", "it was refused when recorded"),
    ("the person declined", "the person declined it when recorded"),
    ("not run:", "it was not run when recorded"),
    (UNFINISHED_PREFIX, "it did not finish when recorded"),
)
_NOTHING_RUNS = PermissionPolicy("plan", deny=(Rule("*"),))  # plain replay: every result comes from the recording

LONGEST_TURN = 60.0  # seconds: the most a replay at 1× spends on one recorded turn


@dataclass(frozen=True, slots=True)
class RecordedRun:
    """One run of a recorded branch.

    ``prompt`` is the id of the user node that started it and ``task`` its content (two
    prompts in a row are one: the first got no answer); ``turns`` the model's messages;
    ``results`` every call's recorded result, a call the branch has no result for answered
    as a resume answers it; ``stops_at`` the node where the recording stops before the run
    answered (None when it answered); ``permissions`` what the run was started with, if recorded.
    """

    prompt: str
    task: Any
    turns: tuple[RecordedTurn, ...]
    calls: tuple[ToolCall, ...]
    results: Mapping[str, ToolResult]
    stops_at: str | None
    permissions: Mapping[str, Any] | None


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


def recorded_runs(tree: SessionTree, node_id: str | None = None) -> list[RecordedRun]:
    """The runs of the branch from the root to ``node_id`` (the leaf when None), in order.

    Raises ConfigError when the branch does not start with a prompt, SessionError when one
    of its records is damaged.
    """
    path = tree.path(node_id)
    runs: list[_Building] = []
    for index, node in enumerate(path):
        following = path[index + 1] if index + 1 < len(path) else None
        if node.kind == "user":
            content = node.message["content"]
            if is_loop_note(node.message) and runs:
                runs[-1].last = node.id
            elif runs and path[index - 1].kind == "user" and not runs[-1].turns:
                runs[-1].add_prompt(content, node.id)  # the earlier prompt got no answer: one turn, as the loop sent it
            else:
                runs.append(_Building(node.id, content, tree.permissions.get(node.id)))
        elif not runs:
            raise ConfigError(f"node {node.id} comes before any prompt, so this branch cannot be replayed")
        elif node.kind == "assistant":
            runs[-1].add_turn(node, following, _took(path[index - 1], node))
        elif node.kind == "tool_result":
            runs[-1].add_results(node)
        else:
            runs[-1].last = node.id
    return [run.done(tree.partials) for run in runs]


class _Building:
    """A run of the branch as it is read, node by node."""

    def __init__(self, prompt: str, task: Any, permissions: Mapping[str, Any] | None) -> None:
        self.prompt = prompt
        self.task = task
        self.permissions = permissions
        self.turns: list[RecordedTurn] = []
        self.calls: list[ToolCall] = []
        self.results: dict[str, ToolResult] = {}
        self.last = prompt
        self.answered = False

    def add_prompt(self, content: Any, node_id: str) -> None:
        self.task = content_blocks(self.task) + content_blocks(content)
        self.last = node_id

    def add_turn(self, node: Node, following: Node | None, seconds: float) -> None:
        blocks = content_blocks(node.message["content"])
        calls = [ToolCall.from_block(b) for b in blocks if b["type"] == "tool_use"]
        stop = "tool_use" if calls else "end_turn"
        if following is not None and is_continue_prompt(following.message):
            stop = "max_tokens"  # the loop asked the model to go on
        self.turns.append(RecordedTurn(message=node.message, stop_reason=stop, seconds=seconds))
        self.calls += calls
        self.last = node.id
        self.answered = stop == "end_turn"

    def add_results(self, node: Node) -> None:
        for block in content_blocks(node.message["content"]):
            if block["type"] == "tool_result":
                self.results[block["tool_use_id"]] = _result(block)
        self.last = node.id
        self.answered = False

    def done(self, partials: Mapping[str, list[dict[str, Any]]]) -> RecordedRun:
        finished = {b["tool_use_id"]: _result(b) for b in partials.get(self.last, [])}
        results = {**finished, **self.results}
        unanswered = ToolResult(NOT_FINISHED, is_error=True)
        results = {c.id: results.get(c.id, unanswered) for c in self.calls}
        return RecordedRun(
            prompt=self.prompt,
            task=self.task,
            turns=tuple(self.turns),
            calls=tuple(self.calls),
            results=results,
            stops_at=None if self.answered else self.last,
            permissions=self.permissions,
        )


def _as_logged(
    results: Mapping[str, ToolResult], logged: Mapping[str, Mapping[str, Any]]
) -> tuple[dict[str, ToolResult], dict[str, float]]:
    """Recorded results with the data the log kept for them (a diff, an exit code), and their durations
    then. The log may be crafted: a field of the wrong type is left out."""
    served: dict[str, ToolResult] = {}
    durations: dict[str, float] = {}
    for call_id, result in results.items():
        event = logged.get(call_id, {})
        data, took = event.get("data"), event.get("duration_ms")
        served[call_id] = ToolResult(result.output, result.is_error, dict(data)) if isinstance(data, dict) else result
        if isinstance(took, int | float) and not isinstance(took, bool) and math.isfinite(took) and took >= 0:
            durations[call_id] = float(took)
    return served, durations


def _took(before: Node, answer: Node) -> float:
    """How long the model took over ``answer``, as recorded: from the message before it (a crafted or
    skewed clock gives 0, a long gap at most ``LONGEST_TURN``, so a replay at 1× never stalls for hours)."""
    seconds = answer.ts - before.ts
    return min(seconds, LONGEST_TURN) if math.isfinite(seconds) and seconds > 0 else 0.0


def _result(block: dict[str, Any]) -> ToolResult:
    content = block.get("content", "")
    if not isinstance(content, str):
        content = "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
    return ToolResult(output=content, is_error=bool(block.get("is_error")))


def recorded_policy(permissions: Mapping[str, Any] | None) -> PermissionPolicy:
    """The permissions a run was recorded with; for a run recorded before they were kept, ``ask`` and no rules."""
    if permissions is None:
        return PermissionPolicy("ask")
    return PermissionPolicy.build(permissions["mode"], permissions.get("allow", ()), permissions.get("deny", ()))


def why_not_rerun(
    call: ToolCall, recorded: ToolResult, policy: PermissionPolicy, tools: ToolGroup, original: Path, scratch: Path
) -> str | None:
    """Why ``call`` must keep its ``recorded`` result instead of running again in ``scratch``; None when it may run."""
    said = recorded.output.removeprefix("Error: ")
    for prefix, why in _NEVER_RAN:
        if said.startswith(prefix):
            return why
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
        self.recorded: Mapping[str, ToolResult] = {}
        self.workspace = workspace
        self.original = original
        self.redactor = redactor
        self.checked = 0

    def __call__(self, call: ToolCall, result: ToolResult) -> None:
        before = self.recorded.get(call.id)
        if before is None:
            return
        self.checked += 1
        then = normalize_output(self.redactor.mask(before.output), self.original)
        now = normalize_output(self.redactor.mask(result.output), self.workspace)
        if then != now or before.is_error != result.is_error:
            raise ReplayDiverged(_report(call, then, now))


def _report(call: ToolCall, then: str, now: str) -> str:
    old, new = then.splitlines(), now.splitlines()
    line = next((i for i, (a, b) in enumerate(zip(old, new, strict=False)) if a != b), min(len(old), len(new)))
    recorded = old[line] if line < len(old) else "(end of output)"
    current = new[line] if line < len(new) else "(end of output)"
    argument = call.args.get("command") or call.args.get("path") or call.args.get("pattern") or ""
    return (
        f"replay diverged at call {call.id} ({call.name} {argument}), line {line + 1}: "
        f"recorded {recorded!r}, now {current!r}"
    )


def _ending(run: RecordedRun) -> str | None:
    if run.stops_at is None:
        return None
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
    logged: Mapping[str, Mapping[str, Any]] | None = None,
) -> ReplayReport:
    """Play the branch of ``tree`` that ends at ``node_id`` (the leaf when None) back; events go to ``bus``.

    ``workspace`` is where re-run tools act (a scratch folder); with ``repo``, each run
    starts from the snapshot pinned at its prompt (the first needs one: ConfigError
    without). ``original_workspace`` is the path the recording used, masked in comparisons.
    ``secrets`` (the process's credentials) are masked in every event, result and comparison.
    With ``clock`` each turn takes its recorded time at the clock's speed, and holds while it
    is paused; without, the replay plays as fast as it can. ``logged`` (each call's finished event
    from the session's log, by call id) gives recorded results their duration and data (an edit's
    diff), so the replay shows them as the run did.
    """
    if rerun_tools:
        _check_scratch(workspace, original_workspace, repo)
    runs = recorded_runs(tree, node_id)
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
            ReplayProvider(every_turn, secrets=secrets), DEFAULT_TOOLS, env, strategy=ReAct(config), bus=bus
        )
        rerun = _Rerun(core, tree, repo, original_workspace) if rerun_tools and repo is not None else None
        for number, run in enumerate(runs, start=1):
            core.executor.recorded, core.executor.recorded_ms = _as_logged(run.results, logged or {})
            core.executor.policy = _NOTHING_RUNS
            if rerun is not None:
                await rerun.arm(run, first=number == 1)
            provider = ReplayProvider(
                run.turns, model=f"{model} (replay)", ending=_ending(run), secrets=secrets, clock=clock
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
                as_recorded = finished.reason in {RECORDING_ENDED, "stuck"}
            if not as_recorded:
                return _report_of(rerun, False, finished.reason, number, error=finished.error)
    return _report_of(rerun, True, "completed", len(runs), stops_at=runs[-1].stops_at)


class _Rerun:
    """Readies each run for its tools to run again: its files, its permissions, the calls that keep their record."""

    def __init__(self, core: AgentLoop, tree: SessionTree, repo: ShadowRepo, original: Path) -> None:
        self.core = core
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
        held = {}
        for call in run.calls:
            why = why_not_rerun(call, run.results[call.id], policy, self.core.tools, self.original, scratch)
            if why is not None:
                held[call.id] = run.results[call.id]
                shown = describe_call(call.name, self.core.redactor.mask_value(call.args))  # masked, then cut
                self.not_rerun.append(f"call {call.id} ({call.name} {shown}): {why}")
        executor = self.core.executor
        executor.recorded = held
        executor.policy = policy  # no looser than the recording's, and nobody to ask
        executor.observe = self.after_call
        self.comparer.recorded = run.results

    def after_call(self, call: ToolCall, result: ToolResult) -> None:
        """A link out that the call's programs made is gone before the next call could follow it; then compare."""
        self.left_out += remove_links_out(self.core.env.workdir)
        self.comparer(call, result)


def _report_of(rerun: _Rerun | None, success: bool, reason: str, runs: int, **more: Any) -> ReplayReport:
    if rerun is None:
        return ReplayReport(success, reason, runs, 0, **more)
    checked, not_rerun, left_out = rerun.comparer.checked, tuple(rerun.not_rerun), tuple(rerun.left_out)
    return ReplayReport(success, reason, runs, checked, not_rerun=not_rerun, left_out=left_out, **more)
