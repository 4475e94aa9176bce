"""Ctrl-C and `--max-time` end a run within a second or two whatever its command is doing: writing an endless
fast stream, or stopping its own supervisor again and again. Nothing the call started is left running."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_anthropic import FakeAnthropic
from tests.helpers_loop import PidFifo, has_ended, watch
from tests.interrupt_helpers import assert_interrupted, interrupt, start, until_the_call_starts


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
    proc = start(api, model_env, ws, "bash", {"command": command}, "--max-time", "5")
    pidfd = watch(fifo.pid())
    running = time.monotonic()  # the command runs: the run began before, so its limit strikes within 5 s of now
    out, err = proc.communicate(timeout=60)
    elapsed = time.monotonic() - running
    done = json.loads(out.splitlines()[-1])
    assert (done["reason"], proc.returncode) == ("time_limit", 1), err
    assert elapsed < 5 + 3, f"the run went on {elapsed:.1f}s after its command started, with a 5s limit"
    assert has_ended(pidfd)
