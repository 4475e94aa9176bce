"""Provides the ``Executor``: runs one assistant message's tool calls safely.

Calls are checked before they run (known tool, valid JSON, arguments that fit
the schema); a bad call becomes an error result the model can read. Runs of
consecutive read-only calls go concurrently (bounded); a call that can change
things runs alone, after everything before it. One failing call never
cancels its siblings, and results come back in call order.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.errors import ChimeraError, ToolInputError
from chimera.core.events import StepEvent, ToolCallFinished, ToolCallStarted
from chimera.core.tool_group import ToolGroup
from chimera.core.tools.base import DEFAULT_MAX_OUTPUT, ToolContext, ToolResult
from chimera.core.tools.schema import validate

__all__ = ["Executor", "ToolCall", "ToolOutcome"]

Emit = Callable[[type[StepEvent], dict[str, Any]], object]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A ``tool_use`` block from an assistant message."""

    id: str
    name: str
    args: dict[str, Any]

    @classmethod
    def from_block(cls, block: dict[str, Any]) -> ToolCall:
        raw = block.get("input")
        return cls(
            id=str(block["id"]),
            name=str(block["name"]),
            args=raw if isinstance(raw, dict) else {"__input__": raw},
        )


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    call: ToolCall
    result: ToolResult
    duration_ms: float

    def block(self) -> dict[str, Any]:
        """The ``tool_result`` block that answers the call."""
        return {
            "type": "tool_result",
            "tool_use_id": self.call.id,
            "content": self.result.output,
            "is_error": self.result.is_error,
        }


class Executor:
    """Runs tool calls against a workspace.

    Args:
        tools: the tools the model may call.
        workspace: the workspace root; resolved here once.
        spill_dir: where full outputs over the cap are saved.
        max_output: characters of noisy output the model sees.
        concurrency: how many read-only calls may run at once.
    """

    def __init__(
        self,
        tools: ToolGroup,
        workspace: Path,
        spill_dir: Path,
        *,
        max_output: int = DEFAULT_MAX_OUTPUT,
        concurrency: int = 10,
    ) -> None:
        self.tools = tools
        self.workspace = workspace.resolve()
        self.spill_dir = spill_dir
        self.max_output = max_output
        self._slots = asyncio.Semaphore(concurrency)

    async def run(self, calls: Sequence[ToolCall], emit: Emit) -> list[ToolOutcome]:
        """Run ``calls`` and return their outcomes in call order."""
        outcomes: list[ToolOutcome] = []
        batch: list[ToolCall] = []
        for call in calls:
            tool = self.tools.get(call.name)
            if tool is not None and tool.read_only:
                batch.append(call)
                continue
            outcomes += await self._run_concurrently(batch, emit)
            batch = []
            outcomes.append(await self._run_one(call, emit))
        outcomes += await self._run_concurrently(batch, emit)
        return outcomes

    async def _run_concurrently(self, calls: list[ToolCall], emit: Emit) -> list[ToolOutcome]:
        if not calls:
            return []

        async def bounded(call: ToolCall) -> ToolOutcome:
            async with self._slots:
                return await self._run_one(call, emit)

        return list(await asyncio.gather(*(bounded(c) for c in calls)))

    async def _run_one(self, call: ToolCall, emit: Emit) -> ToolOutcome:
        emit(ToolCallStarted, {"call_id": call.id, "name": call.name, "args": call.args})
        started = time.perf_counter()
        result = await self._execute(call)
        duration_ms = round((time.perf_counter() - started) * 1000, 3)
        emit(
            ToolCallFinished,
            {
                "call_id": call.id,
                "name": call.name,
                "args": call.args,
                "is_error": result.is_error,
                "duration_ms": duration_ms,
                "output": result.output,
                "data": result.data,
            },
        )
        return ToolOutcome(call, result, duration_ms)

    async def _execute(self, call: ToolCall) -> ToolResult:
        tool = self.tools.get(call.name)
        if tool is None:
            known = ", ".join(self.tools.names)
            return ToolResult.error(f"there is no tool named {call.name!r}; the tools are: {known}")
        if "__invalid_json__" in call.args:
            return ToolResult.error(
                f"the arguments were not valid JSON ({call.args['__invalid_json__'][:200]!r}); send a JSON object"
            )
        if "__input__" in call.args:
            return ToolResult.error("the arguments must be a JSON object")
        try:
            validate(call.args, tool.input_schema)
        except ToolInputError as err:
            return ToolResult.error(f"{err}. {call.name} takes: {_signature(tool.input_schema)}")
        ctx = ToolContext(self.workspace, self.spill_dir, self.max_output, _safe_name(call.id))
        try:
            return await tool.run(call.args, ctx)
        except ChimeraError as err:
            return ToolResult.error(str(err))
        except Exception as err:  # a tool's failure is the model's to read, never the run's end
            return ToolResult.error(f"{call.name} failed: {type(err).__name__}: {err}")


def _signature(input_schema: dict[str, Any]) -> str:
    required = set(input_schema.get("required", []))
    parts = []
    for name, sub in input_schema.get("properties", {}).items():
        kind = sub.get("type", "any")
        parts.append(f"{name}: {kind}" if name in required else f"{name}?: {kind}")
    return "(" + ", ".join(parts) + ")"


def _safe_name(call_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_" else "_" for c in call_id)[:80] or "call"
