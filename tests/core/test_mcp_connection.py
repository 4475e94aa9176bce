"""One MCP server's connection, against the reference server (``mcp-server-everything``, over stdio): started,
its tools listed as the server describes them, called with their results read, its secrets kept, its stderr
logged; a command that is not there and a call that outlives its timeout named in one line; cancelled and
concurrent calls; stopped with no process left. The faults a server commits itself (junk on stdout, no answer
to ``initialize``, a crash mid-call) are in ``test_mcp_faults.py``, against the fault fixture server."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.connection import CallFailed, Connection
from tests.hostile import HOSTILE
from tests.mcp_helpers import everything_server


def connection(tmp_path: Path, **settings: object) -> Connection:
    """A connection to the reference server (or what ``settings`` say instead), its log in ``tmp_path``."""
    config = ServerConfig(name="everything", origin="test", **{"command": str(everything_server()), **settings})
    return Connection(config, tmp_path / "everything.log", tmp_path)


def pid_file_wrapper(tmp_path: Path) -> tuple[dict[str, object], Path]:
    """Settings that start the reference server through a shell that first writes its pid (the server's, as it
    execs) to a file."""
    pid = tmp_path / "server.pid"
    script = f'echo $$ > "{pid}"; exec "{everything_server()}" stdio'
    return {"command": "/bin/sh", "args": ("-c", script)}, pid


async def test_a_servers_tools_are_listed_as_it_describes_them(tmp_path: Path) -> None:
    """``echo`` is listed with its schema and counts as a read (``readOnlyHint``); a tool without it does not."""
    server = connection(tmp_path)
    await server.start()
    try:
        assert server.state == "ready", server.error
        tools = {tool.name: tool for tool in server.tools}
        assert tools["echo"].read_only
        assert tools["echo"].input_schema["properties"]["message"]["type"] == "string"
        assert not tools["toggle-simulated-logging"].read_only
    finally:
        await server.stop()
    assert server.state == "stopped"


async def test_calls_come_back_as_text_the_model_reads(tmp_path: Path) -> None:
    """Text comes back exactly (outside text stays data), an image is named with its type and size and its bytes
    are kept for the model, and structured content is kept."""
    server = connection(tmp_path)
    await server.start()
    try:
        for text in HOSTILE.values():
            echoed = await server.call("echo", {"message": text}, None)
            assert echoed.text == f"Echo: {text}"
            assert not echoed.is_error
        image = await server.call("get-tiny-image", {}, None)
        assert "[image: image/png, " in image.text
        assert image.images[0]["media_type"] == "image/png"
        structured = await server.call("get-structured-content", {"location": "New York"}, None)
        assert structured.structured is not None
    finally:
        await server.stop()


async def test_a_server_gets_none_of_chimeras_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The API key in Chimera's environment never reaches a server: it gets the SDK's safe set and its own env."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-never-shared")
    server = connection(tmp_path, env={"OWN_SETTING": "kept"})
    await server.start()
    try:
        env = (await server.call("get-env", {}, None)).text
    finally:
        await server.stop()
    assert "OWN_SETTING" in env
    assert "sk-ant-never-shared" not in env
    assert "ANTHROPIC_API_KEY" not in env


async def test_progress_goes_to_the_watcher_and_a_slow_call_fails_at_its_timeout(tmp_path: Path) -> None:
    """Progress the server reports reaches the callback; a call past ``tool_timeout`` fails saying so."""
    server = connection(tmp_path, tool_timeout=1.5)
    await server.start()
    seen: list[tuple[float, float | None]] = []
    try:
        done = await server.call(
            "trigger-long-running-operation", {"duration": 0.4, "steps": 2}, lambda d, t, m: seen.append((d, t))
        )
        assert "completed" in done.text.lower()
        assert seen == [(1, 2), (2, 2)]
        with pytest.raises(CallFailed, match=r"no answer within 1.5 s \(tool_timeout\)"):
            await server.call("trigger-long-running-operation", {"duration": 30, "steps": 1}, None)
        assert (await server.call("echo", {"message": "still here"}, None)).text == "Echo: still here"
    finally:
        await server.stop()


async def test_the_servers_stderr_goes_to_its_log_not_the_terminal(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """What the server says on stderr is in its log file; nothing reaches the terminal the workbench draws on."""
    server = connection(tmp_path)
    await server.start()
    await server.stop()
    assert "Starting" in server.log.read_text()
    assert capfd.readouterr().err == ""


@pytest.mark.parametrize(
    ("command", "said"),
    [
        ("/nowhere/mcp-server", "its command /nowhere/mcp-server does not exist"),
        ("mcp-server-nowhere", "its command mcp-server-nowhere is not on its PATH ("),
        ("./notes.txt", "its command ./notes.txt is not an executable file"),  # from the workspace
    ],
)
async def test_a_command_that_is_not_there_is_one_line(tmp_path: Path, command: str, said: str) -> None:
    """A server whose command does not exist, is not on the PATH it gets, or cannot run fails to start at once,
    named in one line."""
    (tmp_path / "notes.txt").write_text("not a program")
    server = connection(tmp_path, command=command)
    await server.start()
    assert server.state == "failed"
    assert server.error is not None
    assert server.error.startswith(said)
    assert "\n" not in server.error


async def test_a_disabled_server_is_never_started(tmp_path: Path) -> None:
    """``enabled = false``: nothing runs, and the connection says why it is off."""
    settings, pid = pid_file_wrapper(tmp_path)
    server = connection(tmp_path, enabled=False, **settings)
    await server.start()
    assert (server.state, server.error) == ("off", "disabled in its settings")
    assert not pid.exists()


async def test_stop_leaves_no_server_process(tmp_path: Path) -> None:
    """Once stopped, the server's process is gone (its stdin closed, then TERM, then KILL: the SDK's shutdown)."""
    settings, pid = pid_file_wrapper(tmp_path)
    server = connection(tmp_path, **settings)
    await server.start()
    assert server.ready, server.error
    await server.stop()
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid.read_text()), 0)


async def test_a_cancelled_call_ends_at_once_and_the_server_goes_on(tmp_path: Path) -> None:
    """Escape cancels a call: the call ends as soon as it is cancelled (the SDK tells the server), and the
    server answers the next call."""
    server = connection(tmp_path)
    await server.start()
    try:
        working = asyncio.Event()
        call = asyncio.create_task(
            server.call("trigger-long-running-operation", {"duration": 60, "steps": 300}, lambda *_: working.set())
        )
        await working.wait()
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert (await server.call("echo", {"message": "after"}, None)).text == "Echo: after"
    finally:
        await server.stop()


async def test_calls_to_one_server_run_side_by_side(tmp_path: Path) -> None:
    """Two calls at once are both at work before either ends (each reports progress while the other runs)."""
    server = connection(tmp_path)
    await server.start()
    try:
        first, second = asyncio.Event(), asyncio.Event()
        both = asyncio.Event()

        def seen(mine: asyncio.Event, other: asyncio.Event) -> None:
            mine.set()
            if other.is_set():
                both.set()

        slow = {"duration": 60, "steps": 300}
        calls = [
            asyncio.create_task(server.call("trigger-long-running-operation", slow, lambda *_: seen(first, second))),
            asyncio.create_task(server.call("trigger-long-running-operation", slow, lambda *_: seen(second, first))),
        ]
        await asyncio.wait_for(both.wait(), 20)
        assert not any(call.done() for call in calls)
        for call in calls:
            call.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
    finally:
        await server.stop()
