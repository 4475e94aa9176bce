"""Provides the ``think`` tool: a place to reason, for models without native thinking."""

from __future__ import annotations

from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema

__all__ = ["Think"]


class Think:
    name = "think"
    description = (
        "Think step by step before acting: the thought is recorded and nothing else happens. "
        "Use it to plan, or to weigh what a tool result means."
    )
    input_schema = schema({"thought": {"type": "string", "description": "Your reasoning."}}, ["thought"])
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("Thought recorded.")
