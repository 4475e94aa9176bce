"""Nothing a tool does keeps Chimera from ending: a FIFO is refused at once, and a call stuck in a worker thread
does not stop the process from exiting when its run is over."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

# A tool that blocks in a worker thread on a FIFO nobody writes to; the run is cancelled once it is stuck.
_STUCK_RUN = """
import asyncio, sys
from pathlib import Path
from chimera.core.tools.executor import Executor, ToolCall
from chimera.core.tool_group import ToolGroup
from chimera.core.tools.base import ToolResult, schema

class Stuck:
    name, description, read_only = "stuck", "opens a FIFO", True
    input_schema = schema({}, [])

    async def run(self, args, ctx):
        loop = asyncio.get_running_loop()

        def block():
            loop.call_soon_threadsafe(started.set_result, None)
            open(sys.argv[1], "rb")  # no writer ever comes

        await asyncio.to_thread(block)
        return ToolResult("unreachable")

async def main():
    global started
    started = asyncio.get_running_loop().create_future()
    workspace = Path(sys.argv[2])
    executor = Executor(ToolGroup([Stuck()]), workspace, workspace)
    run = asyncio.ensure_future(executor.run([ToolCall("c1", "stuck", {})], print))
    await started
    run.cancel()
    await asyncio.gather(run, return_exceptions=True)
    print("run over", flush=True)

asyncio.run(main())
"""


def test_a_call_stuck_in_a_thread_does_not_keep_the_process_alive(tmp_path: Path) -> None:
    """A tool blocked for ever in its worker thread: once its run is cancelled, the Python process still exits, 0."""
    fifo = tmp_path / "never.fifo"
    os.mkfifo(fifo)
    proc = subprocess.Popen(
        [sys.executable, "-c", _STUCK_RUN, str(fifo), str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"the process did not exit after its run was over (printed {out!r})")
    assert (proc.returncode, out.splitlines()[-1], err) == (0, "run over", "")


def test_reading_a_fifo_in_chimera_run_is_refused_and_the_run_ends(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """`chimera run` whose model reads a FIFO: the read is refused in one line, the run completes, exit 0."""
    workdir = tmp_path / "ws"
    workdir.mkdir()
    fifo = workdir / "p.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "read", {"path": "p.fifo"}), stop_reason="tool_use"),
        message(text("It is a pipe.")),
    )
    argv = ["run", "read it", "--json", "--workdir", str(workdir), "--max-time", "30", "--permission-mode", "bypass"]
    started = time.monotonic()
    proc = subprocess.Popen(
        [*chimera_command(), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        pytest.fail(f"chimera run never exited; its last event: {out.splitlines()[-1:]}")
    finally:
        with contextlib.suppress(OSError):  # a reader still blocked on the FIFO (the bug) is let go
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    events = [json.loads(line) for line in out.splitlines()]
    assert proc.returncode == 0, err
    [result] = [e for e in events if e["type"] == "tool_call_finished"]
    assert (result["is_error"], result["output"]) == (True, "Error: p.fifo is a named pipe (FIFO), not a regular file")
    assert (events[-1]["type"], events[-1]["answer"]) == ("run_finished", "It is a pipe.")
    assert time.monotonic() - started < 30  # well before the time limit: nothing waited on the FIFO
