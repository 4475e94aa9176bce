"""No process a bash call starts outlives the call, however it detaches (setsid, a double fork, nohup,
disown, a daemon), when the command exits, times out or is cancelled, and when Chimera is killed with SIGKILL."""

from __future__ import annotations

import asyncio
import json
import os
import select
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.bash import Bash
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, tool_use
from tests.processes import Reaper

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="outside Linux a detached process can escape"
)

# A Python process that forks, starts a session, forks again and writes its pid to the FIFO in argv[1].
_DOUBLE_FORK = (
    "import os, sys, time\n"
    "if os.fork(): os._exit(0)\n"
    "os.setsid()\n"
    "if os.fork(): os._exit(0)\n"
    "with open(sys.argv[1], 'w') as fifo: fifo.write(f'{os.getpid()}\\n')\n"
    "time.sleep(782)\n"
)

# Ways a command can start a process that leaves its process group or session; `{fifo}` gets its pid.
DETACHED = {
    "setsid -f": "setsid -f sh -c 'echo $$ > {fifo}; exec sleep 781'",
    "double fork": f"{shlex.quote(sys.executable)} -c {shlex.quote(_DOUBLE_FORK)} {{fifo}}",
    "nohup &": "nohup sh -c 'echo $$ > {fifo}; exec sleep 783' > /dev/null 2>&1 &",
    "disown": "sh -c 'echo $$ > {fifo}; exec sleep 784' & disown",
    "daemon closing its files": "setsid -f sh -c 'exec < /dev/null > /dev/null 2>&1; echo $$ > {fifo}; exec sleep 785'",
}


def detach(how: str, fifo: str) -> str:
    """Shell lines that start a detached process the ``how`` way and put its pid in $pid once it runs."""
    return f"mkfifo {fifo}\n{DETACHED[how].replace('{fifo}', fifo)}\nread -r pid < {fifo}\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    ws = (tmp_path / "ws").resolve()
    ws.mkdir()
    return ToolContext(workspace=ws, spill_dir=tmp_path / "spill")


async def bash(ctx: ToolContext, command: str, **args: object) -> ToolResult:
    return await Bash().run({"command": command, **args}, ctx)


@pytest.mark.parametrize("how", DETACHED)
async def test_a_detached_process_dies_when_its_command_exits(ctx: ToolContext, reaper: Reaper, how: str) -> None:
    """The command exits at once; the process it detached is killed before the call returns, which it does promptly."""
    result = await bash(ctx, f"{detach(how, 'pid.fifo')}echo $pid")
    assert (result.is_error, result.data["exit_code"]) == (False, 0), result.output
    assert result.data["seconds"] < 5
    reaper.assert_killed(int(result.output))


async def test_detached_processes_die_when_the_command_times_out(ctx: ToolContext, reaper: Reaper) -> None:
    """A command that detaches three processes and then hangs is killed at its timeout, with all three."""
    lines = [detach(how, f"{n}.fifo") + "echo $pid >> pids\n" for n, how in enumerate(DETACHED) if n < 3]
    result = await bash(ctx, "".join(lines) + "cat pids; exec sleep 300", timeout=2)
    assert result.output.endswith("[killed after 2s timeout; raise `timeout` (at most 600) if it needs longer]")
    for pid in result.output.split()[:3]:
        reaper.assert_killed(int(pid))


async def test_detached_processes_die_when_the_call_is_cancelled(ctx: ToolContext, reaper: Reaper) -> None:
    """Cancelling a call (an interrupt) kills the processes its command detached, not only its group."""
    report = ctx.workspace / "report.fifo"
    os.mkfifo(report)
    fd = os.open(report, os.O_RDWR | os.O_NONBLOCK)  # both ends ours: the command's write is an event to wait for
    task = asyncio.create_task(bash(ctx, f"{detach('setsid -f', 'pid.fifo')}echo $pid > report.fifo; exec sleep 300"))
    try:
        ready, _, _ = await asyncio.to_thread(select.select, [fd], [], [], 10)
        assert ready, "the command never reported"
        pid = int(os.read(fd, 100))
    finally:
        os.close(fd)
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    reaper.assert_killed(pid)


async def test_signals_to_its_supervisor_do_not_let_a_detached_process_go(ctx: ToolContext, reaper: Reaper) -> None:
    """`kill $PPID` (TERM, HUP, INT) from the command does not end the watch: the detached process still dies."""
    # Only the supervisor is signalled: without one, $PPID would be the process running this test.
    signals = "kill -TERM $PPID; kill -HUP $PPID; kill -INT $PPID"
    signals = f"case $(tr '\\0' ' ' < /proc/$PPID/cmdline) in *supervisor.py*) {signals};; esac"
    result = await bash(ctx, f"{detach('setsid -f', 'pid.fifo')}{signals}\necho $pid")
    assert (result.is_error, result.data["exit_code"]) == (False, 0), result.output
    reaper.assert_killed(int(result.output))


async def test_a_command_that_stops_its_supervisor_and_exits_ends_at_once(ctx: ToolContext, reaper: Reaper) -> None:
    """`kill -STOP $PPID` and exit: the call still returns promptly and what the command detached is killed."""
    command = f"{detach('setsid -f', 'pid.fifo')}echo $pid; kill -STOP $PPID; kill -TSTP $PPID; kill -TTOU $PPID"
    result = await bash(ctx, command, timeout=60)
    assert (result.is_error, result.data["exit_code"]) == (False, 0), result.output
    assert result.data["seconds"] < 5
    reaper.assert_killed(int(result.output))


# --- Chimera killed with SIGKILL mid-call -----------------------------------------------------


def test_kill_9_of_chimera_mid_call_leaves_no_detached_process(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, reaper: Reaper
) -> None:
    """kill -9 of `chimera run` mid-command: what the command detached (setsid, double fork, nohup) dies too."""
    report = tmp_path / "report.fifo"
    os.mkfifo(report)
    ways = ("setsid -f", "double fork", "nohup &")
    lines = [detach(how, f"{n}.fifo") + 'pids="$pids $pid"\n' for n, how in enumerate(ways)]
    command = "".join(lines) + f"echo $PPID $pids > {report}; exec sleep 300"
    api.script(message(tool_use("t1", "bash", {"command": command}), stop_reason="tool_use"))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    fd = os.open(report, os.O_RDWR | os.O_NONBLOCK)  # both ends ours: the command's write is an event to wait for
    proc = subprocess.Popen(
        [*chimera_command(), "run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )
    try:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, "the bash call never started"
        parent, *detached = (int(x) for x in os.read(fd, 200).split())
    finally:
        os.close(fd)
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    assert [json.loads(line)["type"] for line in out.splitlines()][-1] == "tool_call_started"
    assert len(detached) == len(ways)
    reaper.reap(parent)  # the command's supervisor, ours now that Chimera is gone: it ends once all are dead
    for pid in detached:
        reaper.assert_killed(pid)


def test_a_supervisor_stopped_when_chimera_is_killed_still_kills_what_the_command_detached(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, reaper: Reaper
) -> None:
    """Chimera cannot continue its stopped supervisor once killed: the kernel does, and the supervisor kills all."""
    report = tmp_path / "report.fifo"
    os.mkfifo(report)
    command = f"{detach('setsid -f', '0.fifo')}echo $PPID $pid > {report}; exec sleep 300"
    api.script(message(tool_use("t1", "bash", {"command": command}), stop_reason="tool_use"))
    workdir = tmp_path / "ws"
    workdir.mkdir()
    fd = os.open(report, os.O_RDWR | os.O_NONBLOCK)
    proc = subprocess.Popen(
        [*chimera_command(), "run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **model_env},
    )
    try:
        ready, _, _ = select.select([fd], [], [], 30)
        assert ready, "the bash call never started"
        supervisor, detached = (int(x) for x in os.read(fd, 200).split())
    finally:
        os.close(fd)
        proc.send_signal(signal.SIGSTOP)  # Chimera cannot continue its supervisor from now on
    os.kill(supervisor, signal.SIGSTOP)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    reaper.reap(supervisor)  # ours now that Chimera is gone: it ends once all are dead
    reaper.assert_killed(detached)
