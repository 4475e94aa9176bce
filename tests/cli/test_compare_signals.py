"""`chimera compare` ended by a signal leaves no scratch copy behind: SIGTERM, SIGHUP and a terminal that closes
stop every variant (their commands killed) and remove the copies; the copies a SIGKILL leaves are swept by the
next comparison, while a comparison still running keeps its own."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest

from tests.cli_runner import run_here
from tests.compare_helpers import named_session, start_compare, writes
from tests.fake_anthropic import FakeAnthropic, by_model, message, tool_use
from tests.helpers_loop import PidFifo
from tests.processes import Reaper
from tests.switch_helpers import folder_digest


def sleepy(api: FakeAnthropic, fifo: PidFifo) -> None:
    """Two variants: ``sleepy`` runs a command that tells ``fifo`` its pid and sleeps; ``quick`` writes a file."""
    call = message(tool_use("t1", "bash", {"command": fifo.command(30)}), stop_reason="tool_use", model="sleepy")
    api.responder = by_model({"sleepy": [call], "quick": writes("a.txt", "A\n", "done", "quick")})


def compare_args(session_id: str, *more: str) -> list[str]:
    return [session_id, "--from", "before-v2", "--try", "model=sleepy", "--try", "model=quick", *more]


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    """The TMPDIR the comparisons make their scratch copies in."""
    folder = tmp_path / "tmp"
    folder.mkdir()
    return folder


def ended(proc: subprocess.Popen[str]) -> None:
    """Kill what a failed test left running."""
    if proc.poll() is None:
        proc.kill()
        proc.communicate()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_end_stops_every_variant_and_removes_the_copies(
    signum: int,
    api: FakeAnthropic,
    model_env: dict[str, str],
    project: Path,
    isolated_env: Path,
    tmp_path: Path,
    scratch: Path,
    reaper: Reaper,
) -> None:
    """SIGTERM or SIGHUP while a variant's command sleeps ends compare as Ctrl-C does: the command is killed, the
    rows still come (that variant stopped), exit 1, no scratch copy is left and the workspace is untouched."""
    session_id = named_session(api, model_env, project, isolated_env)
    before = folder_digest(project)
    fifo = PidFifo(tmp_path / "pid.fifo")
    sleepy(api, fifo)
    proc = start_compare(*compare_args(session_id, "--json"), env=model_env, scratch=scratch)
    try:
        pid = fifo.pid(timeout=60)
        assert len(list(scratch.iterdir())) == 1  # the copies are there while it runs
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        fifo.close()
        ended(proc)
    assert proc.returncode == 1, err
    rows = {row["label"]: row for row in json.loads(out.splitlines()[-1])["rows"]}
    assert rows["sleepy"]["outcome"] == "stopped"
    reaper.assert_killed(pid)
    assert list(scratch.iterdir()) == []
    assert folder_digest(project) == before
    assert "Traceback" not in err


@pytest.mark.parametrize("rows_to", ["file", "terminal"])
def test_a_terminal_that_closes_stops_every_variant_and_removes_the_copies(
    rows_to: str,
    api: FakeAnthropic,
    model_env: dict[str, str],
    project: Path,
    isolated_env: Path,
    tmp_path: Path,
    scratch: Path,
    reaper: Reaper,
) -> None:
    """compare runs in a terminal that closes while a variant's command sleeps (the terminal hangs up, and its
    shell sends SIGHUP to the job's process group): the command is killed and no scratch copy is left; rows
    that go to a file still come, and nothing written to the gone terminal ends in a traceback."""
    session_id = named_session(api, model_env, project, isolated_env)
    fifo = PidFifo(tmp_path / "pid.fifo")
    sleepy(api, fifo)
    leader, terminal = os.openpty()
    kept = tmp_path / "kept.txt"  # the stream that is not the terminal: the rows, or what goes to stderr
    with kept.open("w") as file:
        stdout, stderr = (file, terminal) if rows_to == "file" else (terminal, file)
        proc = start_compare(
            *compare_args(session_id, "--json"),
            env=model_env,
            scratch=scratch,
            terminal=terminal,
            stdout=stdout,
            stderr=stderr,
        )
    os.close(terminal)
    try:
        pid = fifo.pid(timeout=60)
        os.close(leader)  # the window closes: the kernel hangs the terminal up (SIGHUP to its session's leader)
        os.killpg(proc.pid, signal.SIGHUP)  # and the shell it ran in passes SIGHUP to its process group
        assert proc.wait(timeout=60) == 1
    finally:
        fifo.close()
        ended(proc)
    reaper.assert_killed(pid)
    assert list(scratch.iterdir()) == []
    if rows_to == "file":
        rows = {row["label"]: row for row in json.loads(kept.read_text().splitlines()[-1])["rows"]}
        assert rows["sleepy"]["outcome"] == "stopped"
    else:
        assert "Traceback" not in kept.read_text()
        assert "Error" not in kept.read_text()


def test_the_copies_a_killed_comparison_left_are_swept_by_the_next_and_a_running_ones_are_kept(
    api: FakeAnthropic,
    model_env: dict[str, str],
    project: Path,
    isolated_env: Path,
    tmp_path: Path,
    scratch: Path,
    reaper: Reaper,
) -> None:
    """While one compare works, another (of another session) leaves its copies alone; once the first is killed
    with SIGKILL (which nothing can clean up after), the next compare to start sweeps what it left."""
    session_id = named_session(api, model_env, project, isolated_env)
    other_id = named_session(api, model_env, project, isolated_env)
    fifo = PidFifo(tmp_path / "pid.fifo")
    sleepy(api, fifo)
    proc = start_compare(session_id, "--from", "before-v2", "--try", "model=sleepy", env=model_env, scratch=scratch)
    try:
        pid = fifo.pid(timeout=60)
        [held] = scratch.iterdir()
        api.responder = by_model({"side": writes("a.txt", "A\n", "done", "side")})  # the first's quick is done
        beside = run_here(
            "compare", other_id, "--from", "before-v2", "--try", "model=side", env={"TMPDIR": str(scratch)}
        )
        assert beside.returncode == 0, beside.stderr
        assert list(scratch.iterdir()) == [held]  # the running comparison's copies are its own
        proc.kill()
        proc.communicate(timeout=60)
    finally:
        fifo.close()
        ended(proc)
    reaper.assert_killed(pid)  # its command, killed as its Chimera died
    assert list(scratch.iterdir()) == [held]  # a SIGKILL leaves them
    api.responder = by_model({"quick": writes("a.txt", "A\n", "done", "quick")})
    after = run_here("compare", other_id, "--from", "before-v2", "--try", "model=quick", env={"TMPDIR": str(scratch)})
    assert after.returncode == 0, after.stderr
    assert list(scratch.iterdir()) == []


def test_a_signal_during_the_verify_command_stops_it_too(
    api: FakeAnthropic,
    model_env: dict[str, str],
    project: Path,
    isolated_env: Path,
    tmp_path: Path,
    scratch: Path,
    reaper: Reaper,
) -> None:
    """SIGTERM while a variant's --verify command runs (its run done): the command is killed, not waited for; the
    row says the variant stopped, unverified, its branch kept; exit 1, no scratch copy left."""
    session_id = named_session(api, model_env, project, isolated_env)
    fifo = PidFifo(tmp_path / "pid.fifo")
    api.responder = by_model({"quick": writes("a.txt", "A\n", "done", "quick")})
    args = [session_id, "--from", "before-v2", "--try", "model=quick", "--verify", fifo.command(30), "--json"]
    proc = start_compare(*args, env=model_env, scratch=scratch)
    try:
        pid = fifo.pid(timeout=60)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        fifo.close()
        ended(proc)
    assert proc.returncode == 1, err
    [row] = json.loads(out.splitlines()[-1])["rows"]
    assert (row["outcome"], row["verified"], row["checkpoint"]) == ("stopped", None, "compare-1-quick")
    reaper.assert_killed(pid)
    assert list(scratch.iterdir()) == []
