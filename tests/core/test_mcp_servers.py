"""A session's MCP servers together: started at once, a failed one named in one line while the others' tools
are offered under the model's names (each server's tool lists applied), counted for the status line, and all
stopped with no process left."""

from __future__ import annotations

import asyncio
from pathlib import Path

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.base import ToolContext
from tests.mcp_helpers import everything_server


async def test_good_servers_offer_their_tools_and_a_bad_one_is_named(tmp_path: Path) -> None:
    """Two copies of the reference server and one whose command is missing: the two are ready, their tools named
    ``mcp__NAME__TOOL`` with ``enabled_tools`` applied, the third named in one notice; ``mcp 2/3``."""
    command = str(everything_server())
    servers = McpServers(
        [
            ServerConfig(name="one", origin="t", command=command, enabled_tools=("echo", "get-sum")),
            ServerConfig(name="two.b", origin="t", command=command, disabled_tools=("echo",)),
            ServerConfig(name="gone", origin="t", command="/nowhere/server"),
            ServerConfig(name="off", origin="t", command=command, enabled=False),
        ],
        tmp_path,
        tmp_path,
        DEFAULT_TOOLS.names,
    )
    try:
        await servers.ready()
        names = {tool.name for tool in servers.tools}
        assert {"mcp__one__echo", "mcp__one__get-sum"} <= names
        assert not any(name.startswith("mcp__one__") for name in names - {"mcp__one__echo", "mcp__one__get-sum"})
        assert "mcp__two_b__get-sum" in names
        assert "mcp__two_b__echo" not in names
        assert servers.counts == (2, 3)
        (notice,) = servers.notices
        assert notice.startswith("MCP server gone failed: ")
        assert (tmp_path / "mcp-two.b.log").exists()
    finally:
        await servers.stop()
    assert all(c.state in ("stopped", "failed", "off") for c in servers.connections)


async def test_a_changed_tool_list_is_listed_again_before_the_next_request(tmp_path: Path) -> None:
    """The reference server adds ``get-roots-list`` once it learns Chimera answers roots, and says its list
    changed: the tools offered are brought up to date before the next request, and the roots it is given are
    the workspace."""
    servers = McpServers(
        [ServerConfig(name="e", origin="t", command=str(everything_server()))], tmp_path, tmp_path, DEFAULT_TOOLS.names
    )
    offered = DEFAULT_TOOLS.with_extra(lambda: servers.tools, servers.refresh)
    try:
        await servers.ready()
        await asyncio.wait_for(servers.connections[0].changed.wait(), 10)
        await offered.renewed()  # what the loop does before each request
        roots = offered.get("mcp__e__get-roots-list")
        assert roots is not None
        listed = await roots.run({}, ToolContext(workspace=tmp_path, spill_dir=tmp_path / "spill"))
        assert tmp_path.resolve().as_uri() in listed.output
    finally:
        await servers.stop()


async def test_over_the_threshold_one_search_tool_stands_in_and_loads_what_it_finds(tmp_path: Path) -> None:
    """With a window so small the reference server's definitions would take more than a tenth of it, the model
    is offered ``mcp_search`` alone, which names how many tools wait behind it; a search for "echo" describes
    and loads ``mcp__e__echo``, which is then offered beside it and runs."""
    servers = McpServers(
        [ServerConfig(name="e", origin="t", command=str(everything_server()))],
        tmp_path,
        tmp_path,
        DEFAULT_TOOLS.names,
        window=10_000,
    )
    offered = DEFAULT_TOOLS.with_extra(lambda: servers.tools, servers.refresh)
    try:
        await servers.ready()
        assert servers.searching
        assert [t.name for t in offered if t.name.startswith("mcp")] == ["mcp_search"]
        search = offered.get("mcp_search")
        assert search is not None
        count = len(servers.every_tool)
        assert f"{count} tools" in search.description
        ctx = ToolContext(workspace=tmp_path, spill_dir=tmp_path / "spill")
        found = await search.run({"query": "echo back the input"}, ctx)
        assert found.output.splitlines()[1].startswith("- mcp__e__echo: ")
        echo = offered.get("mcp__e__echo")
        assert echo is not None
        assert (await echo.run({"message": "hi"}, ctx)).output == "Echo: hi"
        assert sum(servers.costs().values()) > 1_000
    finally:
        await servers.stop()


async def test_under_the_threshold_every_tool_is_offered(tmp_path: Path) -> None:
    """With a large window the server's tools are all offered, and no search tool."""
    servers = McpServers(
        [ServerConfig(name="e", origin="t", command=str(everything_server()))], tmp_path, tmp_path, DEFAULT_TOOLS.names
    )
    try:
        await servers.ready()
        names = [t.name for t in servers.tools]
        assert "mcp_search" not in names
        assert "mcp__e__echo" in names
    finally:
        await servers.stop()
