"""An MCP server's tool as one of Chimera's tools, against the reference server: its result capped and saved
like a command's, secrets masked, a server's error a failed call, a server that is down a failed call saying
so, and progress passed to the person watching, never to the model."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.connection import Connection
from chimera.core.mcp.tool import McpTool
from chimera.core.redact import Redactor
from chimera.core.tools.base import ToolContext
from tests.mcp_helpers import everything_server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Connection]:
    config = ServerConfig(name="everything", origin="test", command=str(everything_server()), args=("stdio",))
    connection = Connection(config, tmp_path / "everything.log", tmp_path)
    await connection.start()
    assert connection.ready, connection.error
    yield connection
    await connection.stop()


def tool(server: Connection, name: str) -> McpTool:
    listed = next(t for t in server.tools if t.name == name)
    return McpTool(f"mcp__everything__{name}", listed, server)


def context(tmp_path: Path, **more: object) -> ToolContext:
    return ToolContext(workspace=tmp_path, spill_dir=tmp_path / "spill", **more)  # type: ignore[arg-type]


async def test_a_long_result_is_cut_and_saved_whole_with_secrets_masked(server: Connection, tmp_path: Path) -> None:
    """A result past the cap shows its head and tail and names the file holding all of it; a secret in it is
    masked in both."""
    secret = "sk-ant-api03-" + "s" * 40
    message = "start " + "x" * 5_000 + f" {secret} " + "y" * 5_000 + " end"
    ctx = context(tmp_path, max_output=2_000, redactor=Redactor([secret]), call_id="c1")
    result = await tool(server, "echo").run({"message": message}, ctx)
    assert result.ended == "ok"
    assert result.output.startswith("Echo: start")
    assert result.output.endswith(" end")
    assert result.data["cut"] is True
    saved = Path(result.data["full_output"]).read_text()
    assert "x" * 5_000 in saved
    assert secret not in saved
    assert (result.data["server"], result.data["tool"]) == ("everything", "echo")


async def test_a_servers_error_is_a_failed_call_with_its_words(server: Connection, tmp_path: Path) -> None:
    """Arguments the server refuses come back as a failed call carrying the server's reason."""
    result = await tool(server, "get-sum").run({"a": "one", "b": 2}, context(tmp_path))
    assert result.ended == "failed"
    assert "expected number, received string" in result.output


async def test_a_server_that_is_down_fails_the_call_saying_so(server: Connection, tmp_path: Path) -> None:
    """A server whose command has gone fails the call in one line naming the server and why."""
    echo = tool(server, "echo")
    await server.stop()
    server.config = ServerConfig(name="everything", origin="test", command="/nowhere/mcp-server")
    result = await echo.run({"message": "x"}, context(tmp_path))
    assert result.ended == "failed"
    assert result.output.startswith("Error: everything's echo failed: the MCP server everything is down: ")
    assert "\n" not in result.output


async def test_progress_reaches_the_watcher_not_the_model(server: Connection, tmp_path: Path) -> None:
    """Each progress step is shown live to the person; the result the model reads holds none of them."""
    watched: list[str] = []
    ctx = context(tmp_path, on_output=watched.append)
    result = await tool(server, "trigger-long-running-operation").run({"duration": 0.2, "steps": 2}, ctx)
    assert watched == ["[progress 1/2]\n", "[progress 2/2]\n"]
    assert "progress" not in result.output
