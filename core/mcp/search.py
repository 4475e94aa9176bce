"""Provides ``ToolSearch``, the ``mcp_search`` tool: MCP tools found by words when listing them all would cost
too much of the model's context.

The servers' tool definitions are sent with every request. When they would take more than
a share of the context window (``McpServers.search_threshold``, a tenth by default), the
model is offered this one tool instead, which names how many tools wait behind it and on
which servers, so nothing is hidden from it. A search answers with the best matches, their
descriptions, and loads them: from the next request on, their definitions are offered
beside the rest and they are called by name. Nothing is cut silently: a tool the search
does not find stays a search away.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from chimera.core.mcp.tool import McpTool
from chimera.core.tools.base import ToolContext, ToolResult, schema

__all__ = ["ToolSearch"]

NAME = "mcp_search"
MOST = 5  # tools a search loads
_WORD = re.compile(r"[a-z0-9]+")


class ToolSearch:
    """Finds MCP tools by words and loads them (``loaded``), for the servers' tools that are not all offered."""

    name = NAME
    read_only = True
    input_schema = schema(
        {"query": {"type": "string", "description": "words of what the tool should do, or its exact name"}},
        ["query"],
    )

    def __init__(self, tools: Callable[[], Sequence[McpTool]]) -> None:
        self._tools = tools
        self.loaded: set[str] = set()

    @property
    def description(self) -> str:
        tools = self._tools()
        servers = sorted({tool.server for tool in tools})
        return (
            f"Find tools of the MCP servers {', '.join(servers)}: {len(tools)} tools, not listed here to save "
            "context. Give words of what you need (or a tool's exact name); the best matches are described and "
            "become callable by name from your next turn."
        )

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        found = self.find(str(args["query"]))
        if not found:
            return ToolResult(f"No MCP tool matches {args['query']!r}: try other words.")
        self.loaded.update(tool.name for tool in found)
        lines = [f"- {tool.name}: {tool.description}" for tool in found]
        return ToolResult("Loaded, callable by name from your next turn:\n" + "\n".join(lines))

    def find(self, query: str) -> list[McpTool]:
        """The tools that best match ``query``: its exact name first, then by the words they share with it."""
        tools = list(self._tools())
        exact = [tool for tool in tools if tool.name == query.strip()]
        if exact:
            return exact
        words = set(_WORD.findall(query.lower()))
        scored = []
        for tool in tools:
            named = set(_WORD.findall(f"{tool.name} {tool.tool.name}".lower()))
            described = set(_WORD.findall(tool.description.lower()))
            score = 2 * len(words & named) + len(words & described)
            if score:
                scored.append((-score, tool.name, tool))
        return [tool for _, _, tool in sorted(scored, key=lambda item: item[:2])[:MOST]]
