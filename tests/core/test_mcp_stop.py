"""No process an MCP server starts outlives it (Linux: the server runs under ``core/mcp/keeper.py``): what it
starts in its own group and what it detaches (``setsid -f``) die when the session stops the server, and when
Chimera itself is killed with SIGKILL. The server is the reference server, started by a shell that first starts
the two processes and writes their pids down."""

from __future__ import annotations

import contextlib
import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.connection import Connection
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, tool_use
from tests.mcp_helpers import everything_server
from tests.processes import Reaper

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the keeper needs Linux (pidfds)")


def starting_more(report: Path, fifo: Path) -> list[str]:
    """A server command: a shell that starts ``sleep`` in its group and a ``setsid -f sleep``, writes
    ``KEEPER SERVER GROUPED DETACHED`` (the pids) to ``report``, then becomes the reference server."""
    script = (
        f'sleep 771 & grouped=$!; mkfifo "{fifo}"\n'
        f"setsid -f sh -c 'echo $$ > \"{fifo}\"; exec sleep 772'\n"
        f'read -r detached < "{fifo}"\n'
        f'echo $PPID $$ $grouped $detached > "{report}"\n'
        f'exec "{everything_server()}" stdio\n'
    )
    return ["/bin/sh", "-c", script]


async def test_stopping_a_server_ends_everything_it_started(tmp_path: Path, reaper: Reaper) -> None:
    """The session stops the server: the server, a process in its group and one it detached are all gone."""
    report = tmp_path / "pids"
    command, *args = starting_more(report, tmp_path / "fifo")
    config = ServerConfig(name="spawner", origin="test", command=command, args=tuple(args))
    server = Connection(config, tmp_path / "spawner.log", tmp_path)
    await server.start()
    assert server.state == "ready", server.error
    keeper, *started = (int(pid) for pid in report.read_text().split())
    await server.stop()
    for pid in started:
        reaper.assert_killed(pid)
    reaper.reap(keeper)


def test_kill_9_of_chimera_leaves_nothing_a_server_started(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, reaper: Reaper
) -> None:
    """``chimera run`` killed with SIGKILL while its server runs: the server and all it started end too."""
    report = tmp_path / "report.fifo"
    os.mkfifo(report)
    command, *args = starting_more(report, tmp_path / "fifo")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"spawner": {"command": command, "args": args}}}))
    api.script(message(tool_use("t1", "bash", {"command": "exec sleep 300"}), stop_reason="tool_use"))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    fd = os.open(report, os.O_RDWR | os.O_NONBLOCK)  # both ends ours: the server's write is the event to wait for
    run = [*chimera_command(), "run", "go", "--workdir", str(workdir), "--mcp-config", str(config)]
    proc = subprocess.Popen(
        [*run, "--permission-mode", "bypass"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **model_env},
    )
    try:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, "the server never started"
        keeper, *started = (int(pid) for pid in os.read(fd, 200).split())
    finally:
        os.close(fd)
        proc.send_signal(signal.SIGKILL)
        proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    reaper.reap(keeper)  # ours now that Chimera is gone: it ends once all it kept are dead
    for pid in started:
        reaper.assert_killed(pid)


@pytest.mark.parametrize("delay_ms", range(0, 30, 2))
def test_term_at_any_moment_ends_the_keeper_quietly(delay_ms: int) -> None:
    """TERM sent to a keeper whose server is starting, running or already gone, at moments 0-28 ms after it
    starts: the keeper always ends without a word on stderr (no traceback) and with the server's end or TERM's."""
    keeper = Path(__file__).parents[2] / "core" / "mcp" / "keeper.py"
    proc = subprocess.Popen(
        [sys.executable, "-I", "-S", str(keeper), "/bin/sh", "-c", "exit 0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    select.select([], [], [], delay_ms / 1000)  # the moment TERM comes: the test's input, not a wait for anything
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    _, err = proc.communicate(timeout=10)
    assert err == b""
    assert proc.returncode in (0, 128 + signal.SIGTERM, -signal.SIGTERM)
