"""Provides ``replay_session``: a recorded session played back through the agent loop, with no model.

The assistant messages of the session's active path come back through a
``ReplayProvider``, so the loop, the events and every reader behave as they
did. Tool results are the recorded ones by default. With ``rerun_tools`` the
tools run again, for real, in a scratch workspace, and each result is compared
with the recorded one; the first difference stops the replay with a report of
where and how it diverged. Comparisons ignore what changes from run to run
by nature: the workspace's own path, durations and memory addresses.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.agent_loop import CONTINUE_PROMPT, AgentLoop
from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ReplayDiverged
from chimera.core.events import RunFinished
from chimera.core.executor import UNFINISHED_PREFIX, ToolCall
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.providers.replay import RecordedTurn, ReplayProvider
from chimera.core.session_tree import Node, content_blocks
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.base import ToolResult

__all__ = ["ReplayReport", "normalize_output", "replay_session"]

_DURATION = re.compile(r"\b\d+(?:\.\d+)?\s?(?:ms|s|sec|seconds)\b")
_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")


@dataclass(frozen=True, slots=True)
class ReplayReport:
    """How a replay ended: ``reason`` is ``completed``, ``diverged`` or why it stopped."""

    success: bool
    reason: str
    runs: int
    checked: int
    error: str = ""


def normalize_output(text: str, workspace: Path) -> str:
    """``text`` with what naturally differs between runs masked."""
    text = text.replace(str(workspace), "<workspace>")
    text = _DURATION.sub("<duration>", text)
    return _ADDRESS.sub("<address>", text)


def _tasks_and_turns(path: list[Node]) -> tuple[list[Any], list[RecordedTurn], dict[str, ToolResult]]:
    tasks: list[Any] = []
    turns: list[RecordedTurn] = []
    results: dict[str, ToolResult] = {}
    for index, node in enumerate(path):
        if node.kind == "user":
            content = node.message.get("content")
            if content == CONTINUE_PROMPT:
                continue
            if index and path[index - 1].kind == "user" and tasks:
                # Two prompts in a row (a run that died before answering, then a resume): one turn.
                tasks[-1] = content_blocks(tasks[-1]) + content_blocks(content)
            else:
                tasks.append(content)
        elif node.kind == "assistant":
            following = path[index + 1] if index + 1 < len(path) else None
            uses_tools = any(b.get("type") == "tool_use" for b in node.message.get("content", []))
            stop = "tool_use" if uses_tools else "end_turn"
            if following is not None and following.message.get("content") == CONTINUE_PROMPT:
                stop = "max_tokens"
            turns.append(RecordedTurn(message=node.message, stop_reason=stop))
        elif node.kind == "tool_result":
            for block in node.message.get("content", []):
                if block.get("type") == "tool_result":
                    results[block["tool_use_id"]] = ToolResult(
                        output=str(block.get("content", "")), is_error=bool(block.get("is_error"))
                    )
    return tasks, turns, results


class _Comparer:
    """Checks each re-run result against the recording; the first difference raises ReplayDiverged."""

    def __init__(self, recorded: dict[str, ToolResult], workspace: Path, original: Path) -> None:
        self.recorded = recorded
        self.workspace = workspace
        self.original = original
        self.checked = 0

    def __call__(self, call: ToolCall, result: ToolResult) -> None:
        before = self.recorded.get(call.id)
        if before is None:
            return
        self.checked += 1
        then = normalize_output(before.output, self.original)
        now = normalize_output(result.output, self.workspace)
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


async def replay_session(
    path: Iterable[Node],
    *,
    workspace: Path,
    original_workspace: Path,
    spill_dir: Path,
    bus: EventBus,
    rerun_tools: bool = False,
    model: str = "replay",
) -> ReplayReport:
    """Play ``path`` (a session's active path) back; events go to ``bus``.

    ``workspace`` is where re-run tools act (a scratch copy); ``original_workspace``
    is the path the recording used, masked in comparisons.
    """
    tasks, turns, recorded = _tasks_and_turns(list(path))
    provider = ReplayProvider(turns, model=f"{model} (replay)")
    config = LoopConfig(max_steps=max(len(turns), 1))
    with LocalEnvironment(workspace, spill_dir=spill_dir) as env:
        core = AgentLoop(provider, DEFAULT_TOOLS, env, strategy=ReAct(config), bus=bus)
        comparer = _Comparer(recorded, env.workdir, original_workspace)
        if rerun_tools:
            # Calls that never finished were not run to the end then; they are not run now.
            core.executor.recorded = {k: v for k, v in recorded.items() if v.output.startswith(UNFINISHED_PREFIX)}
            core.executor.observe = comparer
        else:
            core.executor.recorded = recorded
        runs = 0
        finished: RunFinished | None = None
        for task in tasks:
            runs += 1
            async with contextlib.aclosing(core.run(task)) as events:
                async for event in events:
                    if isinstance(event, RunFinished):
                        finished = event
            if finished is None or not finished.success:
                break
    if finished is None:
        return ReplayReport(False, "empty", runs, comparer.checked, error="the session has no messages to replay")
    return ReplayReport(finished.success, finished.reason, runs, comparer.checked, error=finished.error)
