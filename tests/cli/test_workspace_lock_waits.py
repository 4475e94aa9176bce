"""A workspace another process holds locked: `chimera run` waits a bounded time, then says in one line which
process holds it (pid and command); Ctrl-C and --max-time end the wait, and a switch names what works there."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.sessions import workspace_lock
from chimera.core.sessions.workspace_lock import WorkspaceLock
from tests.cli_runner import assert_one_line_error, chimera_command, run_here
from tests.interrupt_helpers import PROMPT
from tests.lock_helpers import holding, named


def holds_a_lock(pid: int) -> bool:
    """Whether process ``pid`` holds an flock (Chimera takes its home's lock on the workspace first)."""
    with open("/proc/locks") as fh:
        return any(line.split()[4:5] == [str(pid)] for line in fh if "->" not in line)


@pytest.mark.usefixtures("model_env")
def test_a_run_gives_up_on_a_locked_workspace_in_one_line_naming_the_holder(
    isolated_env: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another process holds the workspace's lock alone: the run waits (here 0.2 s), then one line names the
    holder's pid and command and the folder; no session is left behind."""
    monkeypatch.setattr(workspace_lock, "WAIT", 0.2)
    with holding(project) as holder:
        proc = run_here("run", "x", "--workdir", str(project))
    assert_one_line_error(proc, str(project), named(holder), "still after 0.2 s", "let it finish (or end it)")
    assert list(isolated_env.glob("sessions/*")) == []


@pytest.mark.usefixtures("model_env")
def test_max_time_bounds_the_wait_for_a_locked_workspace(project: Path) -> None:
    """--max-time 0.3 ends the wait at 0.3 s (not the usual wait), in one line naming the holder and the flag."""
    with holding(project) as holder:
        proc = run_here("run", "x", "--workdir", str(project), "--max-time", "0.3")
    assert_one_line_error(proc, named(holder), "still at the wall-time limit of 0.3s", "raise --max-time")


@pytest.mark.skipif(not Path("/proc/locks").exists(), reason="watching for the wait reads /proc/locks (Linux)")
def test_ctrl_c_ends_the_wait_for_a_locked_workspace_at_once(model_env: dict[str, str], project: Path) -> None:
    """Ctrl-C while `chimera run` waits for a locked workspace ends it promptly, with 130 and no traceback."""
    with holding(project):
        run = subprocess.Popen(
            [*chimera_command(), "run", "x", "--workdir", str(project)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
            env={**os.environ, **model_env},
        )  # fmt: skip
        try:
            while not holds_a_lock(run.pid):  # it has its home's lock: it waits for the folder's
                assert run.poll() is None, run.communicate()
                time.sleep(0.01)
            sent = time.monotonic()
            run.send_signal(signal.SIGINT)
            out, err = run.communicate(timeout=30)
            took = time.monotonic() - sent
        finally:
            if run.poll() is None:
                run.kill()
                run.communicate()
    assert (run.returncode, out, err) == (130, "", "")
    assert took < PROMPT


def test_a_switch_names_the_process_working_in_the_folder(isolated_env: Path, project: Path) -> None:
    """Any process holding the workspace's lock shared (as a run does) refuses a switch's hold, naming it."""
    with holding(project, shared=True) as holder, pytest.raises(ConfigError) as refused:
        WorkspaceLock(isolated_env, project).exclusive()
    assert f"another process is working in {project} ({named(holder)}" in str(refused.value)
