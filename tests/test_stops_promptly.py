"""Ctrl-C and `--max-time` end a run within a second or two whatever its command is doing: writing an endless
fast stream, or stopping its own supervisor again and again. Nothing the call started is left running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.helpers_loop import PidFifo, has_ended, watch
from tests.test_cli import chimera_command

PROMPT = 2.5  # seconds from Ctrl-C (or the time limit) to Chimera's exit; the brief is "about 2"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[PidFifo]:
    pipe = PidFifo(tmp_path / "pid.fifo")
    yield pipe
    pipe.close()


def start(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, name: str, args: dict[str, Any], *flags: str, **env: str
) -> subprocess.Popen[str]:
    """`chimera run --json` on ``api`` (and ``env`` over ``model_env``), whose model makes one call of ``name``."""
    api.script(message(tool_use("t1", name, args), stop_reason="tool_use"), message(text("never sent")))
    return subprocess.Popen(
        [*chimera_command(), "run", "go", "--json", "--workdir", str(ws), "--permission-mode", "bypass", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env, **env},
    )


def until_the_call_starts(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    """The events up to tool_call_started (the call runs from then on)."""
    assert proc.stdout is not None
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["type"] == "tool_call_started":
            return events
    raise AssertionError(f"the call never started: {proc.stderr.read() if proc.stderr else ''}")


def interrupt(proc: subprocess.Popen[str]) -> tuple[float, list[dict[str, Any]], str]:
    """SIGINT now; (seconds until Chimera exited, the events after it, stderr)."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return time.monotonic() - sent, [json.loads(line) for line in out.splitlines()], err


def assert_interrupted(elapsed: float, events: list[dict[str, Any]], err: str, code: int | None) -> None:
    assert code == 1, err
    assert elapsed < PROMPT, f"Chimera took {elapsed:.1f}s to stop after Ctrl-C"
    done = events[-1]
    assert (done["type"], done["reason"]) == ("run_finished", "interrupted"), err
    [result] = [e for e in events if e["type"] == "tool_call_finished"]
    assert result["output"].startswith("Cancelled")
    assert "Traceback" not in err


@pytest.mark.parametrize("command", ["yes", "cat /dev/zero | tr '\\0' x"])
def test_ctrl_c_ends_a_command_that_writes_an_endless_stream(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, fifo: PidFifo, command: str
) -> None:
    """`yes` and friends write as fast as a pipe takes it: Ctrl-C still ends the run at once, the writer dies."""
    proc = start(api, model_env, ws, "bash", {"command": f"echo $$ > {fifo.path}; exec sh -c {json.dumps(command)}"})
    until_the_call_starts(proc)
    pidfd = watch(fifo.pid())
    elapsed, events, err = interrupt(proc)
    assert_interrupted(elapsed, events, err, proc.returncode)
    assert has_ended(pidfd)


def test_max_time_ends_a_command_that_writes_an_endless_stream(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, fifo: PidFifo
) -> None:
    """The wall-time limit strikes while `yes` floods the pipe: the run ends on time, `yes` dies."""
    started = time.monotonic()
    proc = start(api, model_env, ws, "bash", {"command": f"echo $$ > {fifo.path}; exec yes"}, "--max-time", "5")
    pidfd = watch(fifo.pid())
    out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started
    done = json.loads(out.splitlines()[-1])
    assert (done["reason"], proc.returncode) == ("time_limit", 1), err
    assert elapsed < 5 + 4, f"the run took {elapsed:.1f}s with a 5s limit"  # start-up included
    assert has_ended(pidfd)


STOPPERS = {
    "its shell stops it in a loop": "echo $$ > {fifo}; while :; do kill -STOP $PPID; done",
    "a detached process stops it in a loop": (
        "sup=$PPID; setsid -f sh -c 'echo $$ > {fifo}; while :; do kill -STOP '$sup'; done'; exec sleep 300"
    ),
    "it stops itself and its supervisor": "echo $$ > {fifo}; kill -STOP $PPID; kill -STOP $$",
    "it stops with SIGTSTP": "echo $$ > {fifo}; while :; do kill -TSTP $PPID; done",
}


@pytest.mark.parametrize("how", STOPPERS)
def test_ctrl_c_ends_a_command_that_keeps_stopping_its_supervisor(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, fifo: PidFifo, how: str
) -> None:
    """SIGSTOP (or SIGTSTP) sent again and again to the supervisor: Ctrl-C ends the run, the stopper is killed."""
    proc = start(api, model_env, ws, "bash", {"command": STOPPERS[how].replace("{fifo}", str(fifo.path))})
    until_the_call_starts(proc)
    pidfd = watch(fifo.pid())
    elapsed, events, err = interrupt(proc)
    assert_interrupted(elapsed, events, err, proc.returncode)
    assert has_ended(pidfd), "the process stopping the supervisor outlived the run"


def test_max_time_ends_a_command_that_keeps_stopping_its_supervisor(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, fifo: PidFifo
) -> None:
    """The wall-time limit strikes while the supervisor is stopped again and again: the run ends on time."""
    command = STOPPERS["a detached process stops it in a loop"].replace("{fifo}", str(fifo.path))
    started = time.monotonic()
    proc = start(api, model_env, ws, "bash", {"command": command}, "--max-time", "5")
    pidfd = watch(fifo.pid())
    out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - started
    done = json.loads(out.splitlines()[-1])
    assert (done["reason"], proc.returncode) == ("time_limit", 1), err
    assert elapsed < 5 + 4, f"the run took {elapsed:.1f}s with a 5s limit"  # start-up included
    assert has_ended(pidfd)
