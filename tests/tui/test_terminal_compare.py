"""The real `chimera` in a real terminal (tmux), ended while ``/compare`` runs: SIGTERM and a closed terminal
(SIGHUP) each stop every variant, their commands gone and their scratch copies removed, as ctrl+q would."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from tests.fake_anthropic import FakeAnthropic, by_model, message, text, tool_use
from tests.helpers_loop import PidFifo
from tests.processes import Reaper
from tests.terminal_helpers import Terminal, needs_tmux, wait_for

pytestmark = needs_tmux

tmux = Terminal("chimera-compare")


def typed(session: str, words: str) -> None:
    tmux("send-keys", "-t", session, "-l", words, check=True)
    tmux("send-keys", "-t", session, "Enter", check=True)


@pytest.mark.parametrize("ending", ["SIGTERM", "terminal closed"])
def test_ending_the_workbench_during_a_comparison_leaves_no_scratch_copy(
    ending: str, isolated_env: Path, project: Path, tmp_path: Path, reaper: Reaper
) -> None:
    """A first task writes a file; ``/compare`` runs it again as two variants, one of them sleeping in a command.
    Ended then, the workbench kills that command and removes the scratch copies from its TMPDIR; SIGTERM's
    exit code says the signal ended it (143)."""
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    fifo = PidFifo(tmp_path / "pid.fifo")
    sleeps = message(tool_use("s", "bash", {"command": fifo.command(60)}), stop_reason="tool_use", model="sleepy")
    writes = message(tool_use("w", "write", {"path": "a.txt", "content": "hi\n"}), stop_reason="tool_use")
    session = "compare"
    with FakeAnthropic() as api:
        api.responder = by_model(
            {
                "main": [writes, message(text("Wrote it."))],
                "sleepy": [sleeps],
                "quick": [message(text("Nothing to do."), model="quick")],
            }
        )
        exit_code = tmp_path / "exit-code"  # what the shell says of chimera's end, after a SIGTERM
        tmux.start_chimera(
            session, isolated_env, project, api.url, "--model", "main", "--permission-mode", "bypass",
            env={"TMPDIR": str(scratch)}, exit_code=exit_code if ending == "SIGTERM" else None,
        )  # fmt: skip
        try:
            chimera = tmux.chimera_pid(session) if ending == "SIGTERM" else tmux.pid(session)
            typed(session, "write the greeting")
            assert wait_for(lambda: "Wrote it." in tmux.capture(session)), tmux.capture(session)
            typed(session, "/compare model=sleepy model=quick")
            sleeping = fifo.pid(timeout=60)
            assert len(list(scratch.iterdir())) == 1  # the comparison's copies, while it runs
            if ending == "SIGTERM":
                os.kill(chimera, signal.SIGTERM)
            else:
                tmux("kill-session", "-t", session, check=True)  # the pane's process gets SIGHUP
            reaper.reap(chimera)
            reaper.assert_killed(sleeping)
            assert list(scratch.iterdir()) == []
            assert (project / "a.txt").read_text() == "hi\n"  # the workspace as the first task left it
            if ending == "SIGTERM":  # ended by the signal, as a script reading the exit code should learn
                assert wait_for(lambda: exit_code.exists() and exit_code.read_text().strip() != "")
                assert exit_code.read_text().strip() == str(128 + signal.SIGTERM)
        finally:
            fifo.close()
            tmux("kill-server")
