"""A session's MCP servers together: started at once, a failed one named in one line while the others' tools
are offered under the model's names (each server's tool lists applied), counted for the status line, and all
stopped with no process left."""

from __future__ import annotations

from pathlib import Path

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers
from chimera.core.tool_group import DEFAULT_TOOLS
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
