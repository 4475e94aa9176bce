"""MCP servers that go wrong, against Chimera's real client: the fault fixture server (``tests/mcp_servers/
fault_server.py``, the SDK's own server API, over stdio) as the model meets it through ``McpServers`` and
``McpTool``. A result marked ``isError`` is a failed call in the server's words; progress and its messages reach the
person watching, never the model; a call past ``tool_timeout`` fails saying so; a server that crashes mid-call
fails that call naming its log and is started again on the next, and one that exits between calls is started again
by the next; a tool list that changes is listed again before the next request; junk on stdout is one notice naming
it; a program that writes only junk, or that never answers ``initialize``, is named in one line with why
(``startup_timeout``), and does not outlive the attempt.

One server is started for the module (each start costs a Python interpreter and the SDK); the tests that use it
leave it as they found it. The faults that happen at start have servers of their own."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers
from chimera.core.tool_group import DEFAULT_TOOLS, ToolGroup
from chimera.core.tools.base import Tool, ToolContext
from tests.mcp_helpers import fault_server

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOOL_TIMEOUT = 2.0  # seconds: the shared server's; its quick calls take a few milliseconds


def config(name: str, *behaviours: str, **settings: object) -> ServerConfig:
    command, args = fault_server(*behaviours)
    return ServerConfig(name=name, origin="test", command=command, args=args, **settings)  # type: ignore[arg-type]


def servers_of(folder: Path, *configs: ServerConfig) -> McpServers:
    return McpServers(list(configs), folder, folder, DEFAULT_TOOLS.names)


def context(folder: Path, **more: object) -> ToolContext:
    return ToolContext(workspace=folder, spill_dir=folder / "spill", **more)  # type: ignore[arg-type]


async def until(condition: Callable[[], bool], what: str, within: float = 10.0) -> None:
    """Wait until ``condition`` holds (looked at every 10 ms), failing after ``within`` seconds naming ``what``."""
    try:
        async with asyncio.timeout(within):
            while not condition():  # noqa: ASYNC110 (what it waits for signals nothing: a server's output that ended)
                await asyncio.sleep(0.01)
    except TimeoutError:
        pytest.fail(f"waited {within:g} s for {what}")


def offered(tools: ToolGroup, name: str) -> Tool:
    found = tools.get(name)
    assert found is not None, f"{name} is not offered: {tools.names}"
    return found


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def fault(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[McpServers]:
    """The module's fault server, named ``fault``, ready, its tools as the model is offered them; its process's id
    in ``fault.pid`` beside its log."""
    folder = tmp_path_factory.mktemp("fault")
    servers = servers_of(folder, config("fault", f"pid={folder / 'fault.pid'}", tool_timeout=TOOL_TIMEOUT))
    await servers.ready()
    assert servers.notices == []
    yield servers
    await servers.stop()


@pytest.fixture
def tools(fault: McpServers) -> ToolGroup:
    """The built-in tools and the fault server's, as the loop offers them (brought up to date before a request)."""
    return DEFAULT_TOOLS.with_extra(lambda: fault.tools, fault.refresh)


async def test_a_result_marked_is_error_is_a_failed_call_in_the_servers_words(tools: ToolGroup, tmp_path: Path) -> None:
    """A tool that answers with ``isError`` is a failed call, and the model reads the server's reason."""
    result = await offered(tools, "mcp__fault__fail").run({"reason": "the disk is full"}, context(tmp_path))
    assert result.ended == "failed"
    assert "the disk is full" in result.output
    assert (result.data["server"], result.data["tool"]) == ("fault", "fail")


async def test_progress_and_its_messages_reach_the_watcher_never_the_model(tools: ToolGroup, tmp_path: Path) -> None:
    """Each progress notification, with the server's message, is shown live on the call's line; the result the
    model reads holds only the answer."""
    watched: list[str] = []
    slow = offered(tools, "mcp__fault__slow")
    result = await slow.run({"steps": 3, "pause": 0.01}, context(tmp_path, on_output=watched.append))
    assert watched == [f"[progress {n}/3: step {n} of 3]\n" for n in (1, 2, 3)]
    assert result.ended == "ok"
    assert result.output == "done after 3 steps"


async def test_a_call_past_its_tool_timeout_fails_saying_so_and_the_server_answers_the_next(
    tools: ToolGroup, tmp_path: Path
) -> None:
    """A call still at work when ``tool_timeout`` passes (its progress shown until then) fails in one line naming
    the setting; the server, told to stop, answers the next call."""
    watched: list[str] = []
    slow = offered(tools, "mcp__fault__slow")
    result = await slow.run({"steps": 600, "pause": 0.1}, context(tmp_path, on_output=watched.append))
    assert result.ended == "failed"
    assert result.output == f"Error: fault's slow failed: no answer within {TOOL_TIMEOUT:g} s (tool_timeout)"
    assert watched
    assert watched[0] == "[progress 1/600: step 1 of 600]\n"
    echoed = await offered(tools, "mcp__fault__echo").run({"text": "still here"}, context(tmp_path))
    assert echoed.output == "still here"


async def test_a_server_that_crashes_mid_call_fails_that_call_and_starts_again_on_the_next_use(
    fault: McpServers, tools: ToolGroup, tmp_path: Path
) -> None:
    """The server's process ends during a call: that call fails in one line pointing at the server's log, which
    holds its last words; the server is shown down (one notice, ``mcp 0/1``) but its tools stay offered; their
    next use starts it again."""
    crash, echo = offered(tools, "mcp__fault__crash"), offered(tools, "mcp__fault__echo")
    crashed = await crash.run({"last_words": "out of memory, bye"}, context(tmp_path))
    (connection,) = fault.connections
    assert crashed.ended == "failed"
    assert crashed.output == (
        f"Error: fault's crash failed: the MCP server fault exited during the call: see {connection.log}"
    )
    assert "out of memory, bye" in connection.log.read_text()
    assert fault.notices == ["MCP server fault failed: exited during a call"]
    assert fault.counts == (0, 1)
    assert offered(tools, "mcp__fault__echo") is echo  # still offered to the next request: its call starts it
    assert (await echo.run({"text": "again"}, context(tmp_path))).output == "again"
    assert fault.notices == []
    assert fault.counts == (1, 1)
    assert offered(tools, "mcp__fault__echo")


async def test_a_server_that_exits_between_calls_is_started_again_by_the_next(
    fault: McpServers, tools: ToolGroup, tmp_path: Path
) -> None:
    """The server's process is killed while no call is at work: it shows as exited and is not counted; the next
    call starts it again and is answered (it is not failed as if the server had died during it)."""
    (connection,) = fault.connections
    echo = offered(tools, "mcp__fault__echo")
    os.kill(int((connection.log.parent / "fault.pid").read_text()), signal.SIGKILL)
    await until(lambda: connection.exited, "the connection sees the server gone")
    assert connection.shown_state == "exited"  # as the /mcp panel and the status line's count show it
    assert fault.counts == (0, 1)
    result = await echo.run({"text": "back"}, context(tmp_path))
    assert (result.ended, result.output) == ("ok", "back")
    assert fault.notices == []
    assert fault.counts == (1, 1)


async def test_a_tool_list_that_changes_is_listed_again_before_the_next_request(
    tools: ToolGroup, tmp_path: Path
) -> None:
    """A call that adds a tool (the server says its list changed) is followed, before the next request, by the new
    tool on offer, which runs; once removed, it is no longer offered."""
    assert tools.get("mcp__fault__added") is None
    await offered(tools, "mcp__fault__add_tool").run({"name": "added"}, context(tmp_path))
    await tools.renewed()  # what the loop does before each request
    added = offered(tools, "mcp__fault__added")
    assert (await added.run({}, context(tmp_path))).output == "added was added"
    await offered(tools, "mcp__fault__remove_tool").run({"name": "added"}, context(tmp_path))
    await tools.renewed()
    assert tools.get("mcp__fault__added") is None


async def test_junk_on_stdout_before_the_protocol_is_one_notice_naming_it_and_the_server_works(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """A server that logs JSON records and a banner on stdout before speaking MCP is named once, in one line quoting
    the first of it; its tools work; nothing reaches the terminal."""
    servers = servers_of(tmp_path, config("noisy", "junk"))
    try:
        await servers.ready()
        assert servers.notices == [
            "MCP server noisy wrote to stdout something that is not MCP: "
            """'{"level": "info", "msg": "fault server v1 starting"}'"""
        ]
        echo = offered(DEFAULT_TOOLS.with_extra(lambda: servers.tools), "mcp__noisy__echo")
        assert (await echo.run({"text": "x"}, context(tmp_path))).output == "x"
    finally:
        await servers.stop()
    assert capfd.readouterr().err == ""


async def test_a_program_that_writes_only_junk_is_named_in_one_line_at_once(tmp_path: Path) -> None:
    """A program that is not an MCP server (it prints its usage and exits) fails at once, not at its
    ``startup_timeout``: one line says it exited and where its log is, one quotes what it wrote; the other server's
    tools are offered."""
    startup_timeout = 30.0
    servers = servers_of(tmp_path, config("chatty", "only-junk", startup_timeout=startup_timeout), config("fine"))
    began = time.monotonic()
    try:
        await servers.ready()
        assert time.monotonic() - began < startup_timeout / 2
        chatty = servers.connections[0]
        assert servers.notices == [
            f"MCP server chatty failed: exited before it was ready: see {chatty.log}",
            "MCP server chatty wrote to stdout something that is not MCP: 'Usage: not-a-server [OPTIONS] FILE'",
        ]
        assert servers.counts == (1, 2)
        assert "mcp__fine__echo" in [tool.name for tool in servers.tools]
    finally:
        await servers.stop()


async def test_a_server_that_never_answers_initialize_is_named_at_its_startup_timeout_and_ended(
    tmp_path: Path,
) -> None:
    """An MCP server that holds the handshake forever is given up after ``startup_timeout``, named in one line with
    the setting, and its process does not outlive the attempt."""
    pid = tmp_path / "silent.pid"
    servers = servers_of(tmp_path, config("mute", "silent", f"pid={pid}", startup_timeout=1.5))
    try:
        await servers.ready()
        assert servers.notices == ["MCP server mute failed: did not answer within 1.5 s (startup_timeout)"]
        assert servers.tools == []
    finally:
        await servers.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)
