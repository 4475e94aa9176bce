"""A disk that fills under Chimera: every failure to save is said in one line, and nothing the run had is lost
for want of the room to save it.

A full disk is stood in for with RLIMIT_FSIZE, set in the child before it runs: a write past the limit fails
with EFBIG ("File too large") exactly where a full disk fails with ENOSPC (the same ``write`` raising OSError,
nothing written), for every file the process writes. A small tmpfs needs privileges this suite does not have,
and /dev/full cannot stand in for a session's files (Chimera refuses any that is not a regular file).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
from collections.abc import Callable
from pathlib import Path

from chimera.core.tools.base import ToolContext
from chimera.core.tools.bash import Bash
from tests.cli_runner import chimera_command, run_chimera
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def _files_at_most(size: int) -> Callable[[], None]:
    """A ``preexec_fn``: no file the child writes may grow past ``size`` bytes (EFBIG past it, as ENOSPC)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit


def _session(api: FakeAnthropic, env: dict[str, str], project: Path) -> tuple[str, Path]:
    """A session with one finished run; its id and its folder."""
    api.script(message(text("Hello.")))
    proc = run_chimera("run", "hello", "--json", "--workdir", str(project), env=env)
    assert proc.returncode == 0, proc.stderr
    session_id = json.loads(proc.stdout.splitlines()[0])["session_id"]
    return session_id, next(Path(os.environ["CHIMERA_HOME"], "sessions").glob(f"{session_id}*"))


def test_an_event_log_that_cannot_grow_is_said_once_in_one_line(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """The disk is full when a resumed run starts: its event log fails at every event, and that is one line on
    stderr, no traceback."""
    session_id, folder = _session(api, model_env, project)
    api.script(
        message(tool_use("toolu_1", "bash", {"command": "echo hi"}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    proc = subprocess.run(
        [*chimera_command(), "run", "again", "--resume", session_id, "--permission-mode", "bypass"],
        capture_output=True, text=True, timeout=60, env={**os.environ, **model_env}, stdin=subprocess.DEVNULL,
        preexec_fn=_files_at_most((folder / "events.jsonl").stat().st_size),
    )  # fmt: skip
    assert "Traceback" not in proc.stderr
    said = [line for line in proc.stderr.splitlines() if "events.jsonl" in line]
    assert len(said) == 1, proc.stderr
    assert said[0].startswith("chimera: ")
    assert "File too large" in said[0]


def test_a_full_output_that_cannot_be_saved_still_reaches_the_model_with_why(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A command prints 290 KB and the disk fills at 100 KB of its saved output: the model gets the head and the
    tail it would have got and is told saving failed, and why; the run goes on."""
    api.script(
        message(tool_use("toolu_1", "bash", {"command": "seq 1 50000"}), stop_reason="tool_use"),
        message(text("Counted.")),
    )
    proc = subprocess.run(
        [*chimera_command(), "run", "count", "--json", "--workdir", str(project), "--permission-mode", "bypass"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, **model_env, "CHIMERA_MAX_TOOL_OUTPUT": "2000"}, preexec_fn=_files_at_most(100_000),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    done = next(e for e in events if e["type"] == "tool_call_finished")
    output = done["output"]
    assert output.startswith("1\n2\n3\n")
    assert output.rstrip().endswith("49999\n50000")
    assert "saving the full output failed (File too large)" in output
    assert done["is_error"] is False  # the command did what it was asked
    saved = done["data"]["full_output"]  # what was saved before the disk filled is named as such
    assert Path(saved).read_text().startswith("1\n2\n")
    assert 0 < Path(saved).stat().st_size <= 100_000
    assert f"the first part of it is in {saved}" in output


async def test_a_cut_output_with_nowhere_to_save_it_says_so_and_names_no_file(tmp_path: Path) -> None:
    """The folder for saved output cannot be made (a file is in its way): bash's result keeps head and tail, says
    saving failed and why, and names no file for `o` to open."""
    (tmp_path / "ws").mkdir()
    blocked = tmp_path / "output"
    blocked.write_text("in the way\n")
    result = await Bash().run({"command": "seq 1 5000"}, ToolContext(tmp_path / "ws", blocked / "s1", max_output=500))
    assert not result.is_error
    assert result.output.startswith("1\n2\n")
    assert result.output.rstrip().endswith("4999\n5000")
    assert "saving the full output failed (Not a directory) ...]" in result.output
    assert "full_output" not in result.data
