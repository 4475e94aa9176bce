"""Provides ``McpServers``: the MCP servers of a session, started together, their tools offered under the names
the model sees, and stopped with the session.

``start`` begins every enabled server at once and returns; ``ready`` waits until each
is ready or has failed (its own ``startup_timeout``), which the first model request
does, so a server's tools are offered from the first turn. A server that fails is
named in ``notices`` in one line and the others go on. ``tools`` is the list of
``McpTool``, named by ``names.model_names`` across all servers, each server's
``enabled_tools`` and ``disabled_tools`` applied; ``refresh`` lists again the servers
that said their list changed. ``stop`` stops them all. The SDK (half a second of
imports) is loaded on a thread when the first server starts, never on the event loop
and never before the workbench's first frame.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Collection, Sequence
from pathlib import Path

from chimera.core.mcp.config import SEARCH_THRESHOLD, ServerConfig
from chimera.core.mcp.connection import Connection
from chimera.core.mcp.names import model_names
from chimera.core.mcp.search import ToolSearch
from chimera.core.mcp.tool import McpTool
from chimera.core.tools.base import Tool

DEFAULT_WINDOW = 200_000  # tokens, when the provider does not say

__all__ = ["McpServers", "tokens"]


class McpServers:
    """The session's servers: one ``Connection`` each, their logs in ``log_dir``."""

    def __init__(
        self,
        configs: Sequence[ServerConfig],
        log_dir: Path,
        workdir: Path,
        builtin: Collection[str],
        *,
        window: int = DEFAULT_WINDOW,
        search_threshold: float = SEARCH_THRESHOLD,
    ) -> None:
        self.log_dir, self.workdir = log_dir, workdir
        self.connections = [Connection(c, log_dir / f"mcp-{_file_name(c.name)}.log", workdir) for c in configs]
        self.builtin = frozenset(builtin)
        self.window = window
        self.search_threshold = search_threshold
        self.search = ToolSearch(lambda: self.every_tool)
        self._starting: asyncio.Task[None] | None = None
        self._made: tuple[tuple[object, ...], list[McpTool]] = ((), [])

    def __bool__(self) -> bool:
        return bool(self.connections)

    def add(self, configs: Sequence[ServerConfig]) -> list[str]:
        """More servers (the workspace's, once confirmed), started at once beside the others: the names of those
        added (a name already configured keeps its first settings)."""
        known = {c.name for c in self.connections}
        fresh = [c for c in configs if c.name not in known]
        added = [Connection(c, self.log_dir / f"mcp-{_file_name(c.name)}.log", self.workdir) for c in fresh]
        self.connections += added
        if added and self._starting is not None:  # the others are starting, or started: these start now too
            previous = self._starting
            self._starting = asyncio.create_task(self._start_more(previous, added), name="mcp:start")
        return [c.name for c in added]

    async def _start_more(self, previous: asyncio.Task[None] | None, added: list[Connection]) -> None:
        if previous is not None:
            await asyncio.gather(previous, return_exceptions=True)
        await asyncio.to_thread(_load_sdk)
        await asyncio.gather(*(c.start() for c in added), return_exceptions=True)

    def start(self) -> None:
        """Start every enabled server at once, in the background (``ready`` waits for them)."""
        if self._starting is None and self.connections:
            self._starting = asyncio.create_task(self._start_all(), name="mcp:start")

    async def ready(self) -> None:
        """Wait until every server is ready or has failed; the tools of those that changed listed again."""
        self.start()
        if self._starting is not None:
            await asyncio.shield(self._starting)
        await self.refresh()

    async def refresh(self) -> None:
        """List again the tools of each ready server that said its list changed."""
        changed = [c for c in self.connections if c.ready and c.tools_changed]
        await asyncio.gather(*(c.list_tools() for c in changed), return_exceptions=True)

    @property
    def every_tool(self) -> list[McpTool]:
        """Every tool the ready servers offer, in the servers' order, under the model's names."""
        # A server that was ready and has since died keeps its tools offered: its next call starts it again.
        ready = [c for c in self.connections if c.ready or (c.state == "failed" and c.tools and c.config.enabled)]
        key = tuple((c.name, id(c.tools)) for c in ready)
        if key != self._made[0]:
            offered = [(c, t) for c in ready for t in c.tools if c.config.offers(t.name)]
            names = model_names([(c.name, t.name) for c, t in offered], self.builtin)
            self._made = (key, [McpTool(names[(c.name, t.name)], t, c) for c, t in offered])
        return self._made[1]

    @property
    def tools(self) -> list[Tool]:
        """The tools offered to the model: every one, or, when their definitions would take more than
        ``search_threshold`` of the context window, ``mcp_search`` and the tools it has loaded."""
        every = self.every_tool
        if tokens(every) <= self.search_threshold * self.window:
            return list(every)
        return [self.search, *(tool for tool in every if tool.name in self.search.loaded)]

    @property
    def searching(self) -> bool:
        """Whether the tools are offered through ``mcp_search`` (their definitions cost too much context)."""
        return tokens(self.every_tool) > self.search_threshold * self.window

    def costs(self) -> dict[str, int]:
        """The tokens each server's tool definitions cost, about (``/mcp`` shows them)."""
        every = self.every_tool
        return {c.name: tokens([t for t in every if t.connection is c]) for c in self.connections}

    @property
    def notices(self) -> list[str]:
        """One line for each server that failed or said something it should not have."""
        lines = [f"MCP server {c.name} failed: {c.error}" for c in self.connections if c.state == "failed"]
        lines += [f"MCP server {c.name} {warning}" for c in self.connections for warning in c.warnings]
        return lines

    @property
    def counts(self) -> tuple[int, int]:
        """(ready, configured and enabled): the status line's ``mcp 2/3``."""
        enabled = [c for c in self.connections if c.config.enabled]
        return sum(c.up for c in enabled), len(enabled)

    async def stop(self) -> None:
        """Stop every server (and any still starting)."""
        if self._starting is not None:
            self._starting.cancel()
            await asyncio.gather(self._starting, return_exceptions=True)
        await asyncio.gather(*(c.stop() for c in self.connections), return_exceptions=True)

    async def _start_all(self) -> None:
        await asyncio.to_thread(_load_sdk)  # half a second of imports, kept off the event loop
        await asyncio.gather(*(c.start() for c in self.connections), return_exceptions=True)


def tokens(tools: Sequence[Tool]) -> int:
    """About how many tokens the definitions of ``tools`` take in a request (four characters a token)."""
    definitions = [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in tools]
    return len(json.dumps(definitions, ensure_ascii=False)) // 4 if definitions else 0


def _load_sdk() -> None:
    import mcp.client.stdio
    import mcp.client.streamable_http  # noqa: F401


def _file_name(name: str) -> str:
    """A server's name as a piece of a file name (its log's)."""
    return "".join(ch if ch.isalnum() or ch in "-_." else "_" for ch in name).strip(".") or "_"
