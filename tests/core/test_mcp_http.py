"""A server reached over Streamable HTTP: the reference server (``mcp-server-everything streamableHttp``) on
127.0.0.1, started once for the module. Its tools are listed and called as a stdio server's are, from the
client and from ``chimera run --mcp-config`` (``"type": "http"``); a URL where nothing listens is one line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.connection import CallFailed, Connection
from tests.cli_runner import run_chimera
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.hostile import SHORT
from tests.mcp_helpers import everything_server


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextlib.contextmanager
def serving() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """The reference server over Streamable HTTP on a free port, once it says it listens: its URL and process."""
    port = free_port()
    server = subprocess.Popen(
        [str(everything_server()), "streamableHttp"],
        env={**os.environ, "PORT": str(port)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None
    drain = threading.Thread(target=server.stderr.read, daemon=True)  # what it logs later never fills the pipe
    try:
        for line in server.stderr:  # the server's own word that it listens: the event to wait for
            if "listening on port" in line:
                break
        else:
            pytest.fail(f"the reference server did not start over HTTP (exit {server.wait()})")
        drain.start()
        yield f"http://127.0.0.1:{port}/mcp", server
    finally:
        server.kill()
        server.wait()
        if drain.is_alive():
            drain.join()  # it ends at the pipe's end, now the server has
        server.stderr.close()


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    """The reference server's endpoint, shared by the module's tests that leave it as they found it."""
    with serving() as (address, _):
        yield address


def connection(tmp_path: Path, url: str) -> Connection:
    return Connection(ServerConfig(name="web", origin="test", url=url), tmp_path / "web.log", tmp_path)


async def test_a_server_over_http_is_listed_and_called_as_one_over_stdio(url: str, tmp_path: Path) -> None:
    """Its tools listed with their schemas; text comes back exactly, an image as an image for the model."""
    server = connection(tmp_path, url)
    await server.start()
    try:
        assert server.state == "ready", server.error
        tools = {tool.name: tool for tool in server.tools}
        assert tools["echo"].input_schema["properties"]["message"]["type"] == "string"
        for value in SHORT.values():
            assert (await server.call("echo", {"message": value}, None)).text == f"Echo: {value}"
        image = await server.call("get-tiny-image", {}, None)
        assert image.images[0]["media_type"] == "image/png"
    finally:
        await server.stop()
    assert server.state == "stopped"


async def test_a_url_where_nothing_listens_is_one_line(tmp_path: Path) -> None:
    """Connection refused: the server fails to start, said in one line, the URL's port named."""
    port = free_port()
    server = connection(tmp_path, f"http://127.0.0.1:{port}/mcp")
    await server.start()
    assert server.state == "failed"
    assert server.error is not None
    assert server.error.startswith(f"cannot reach http://127.0.0.1:{port}/mcp: ")
    assert "\n" not in server.error


def test_chimera_run_calls_a_server_over_http(
    url: str, api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """``"type": "http"`` in ``--mcp-config``: the model's call reaches the server and its answer the model."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"web": {"type": "http", "url": url}}}))
    api.script(
        message(tool_use("w1", "mcp__web__echo", {"message": "over http"}), stop_reason="tool_use"),
        message(text("Heard.")),
    )
    done = run_chimera("run", "echo", "--workdir", str(project), "--mcp-config", str(config), env=model_env)
    assert done.returncode == 0, done.stderr
    result = next(b for b in api.requests[1].messages[-1]["content"] if b.get("type") == "tool_result")
    assert result["content"] == "Echo: over http"


async def test_a_server_that_goes_away_mid_call_fails_that_call_saying_the_connection_closed(tmp_path: Path) -> None:
    """The HTTP server dies while a long operation runs (its progress seen): the call fails in one line saying the
    connection closed (no process or log of Chimera's to point at)."""
    with serving() as (address, process):
        server = connection(tmp_path, address)
        await server.start()
        progressed = asyncio.Event()
        call = asyncio.create_task(
            server.call("trigger-long-running-operation", {"duration": 30, "steps": 30}, lambda *_: progressed.set())
        )
        await progressed.wait()
        process.kill()
        with pytest.raises(CallFailed) as failed:
            await call
        await server.stop()
    assert str(failed.value) == "the MCP server web closed the connection during the call"
    assert server.error == "closed the connection during a call"
