"""`--loop plan` watches the files its steps name without reading any of them whole: a huge file or a link loop
named in a plan is watched at a bounded cost, and the run goes on."""

from __future__ import annotations

import json
import os
import resource
import subprocess
from pathlib import Path
from typing import Any

from chimera.core.loops.fingerprints import WHOLE, falsified, fingerprints
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text

_MEMORY = 3 << 30  # the run's address space: far less than the 6 GB file, far more than a run needs


def _bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (_MEMORY, _MEMORY))


def _plan_naming(api: FakeAnthropic, env: dict[str, str], project: Path, name: str) -> tuple[int, list[Any], str]:
    """A two-step plan whose steps name ``name``, approved and executed by the real `chimera run --loop plan`."""
    api.script(
        message(text(f"- [ ] Look at `{name}`\n- [ ] Say what `{name}` holds\n")),
        message(text("Looked.")),
        message(text("DONE")),
        message(text("It holds nothing to change.")),
        message(text("DONE")),
    )
    proc = subprocess.run(
        [*chimera_command(), "run", "look", "--workdir", str(project), "--loop", "plan", "--json", "--approve-plan"],
        capture_output=True, text=True, timeout=120, env={**os.environ, **env}, stdin=subprocess.DEVNULL,
        preexec_fn=_bounded_memory,
    )  # fmt: skip
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def test_a_plan_naming_a_six_gigabyte_file_runs_in_bounded_memory(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A step names a 6 GB (sparse) file: the run, limited to 3 GB of memory, works through the plan."""
    big = project / "big.bin"
    with big.open("wb") as fh:
        fh.truncate(6 << 30)
    code, events, stderr = _plan_naming(api, model_env, project, "big.bin")
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert [e["passed"] for e in events if e["type"] == "plan_step_checked"] == [True, True]
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["success"] is True


def test_a_plan_naming_a_link_loop_runs_through(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    """A step names a link that leads to itself in a loop: no traceback, the plan is worked through."""
    (project / "loop.txt").symlink_to("loop2.txt")
    (project / "loop2.txt").symlink_to("loop.txt")
    code, events, stderr = _plan_naming(api, model_env, project, "loop.txt")
    assert code == 0, stderr
    assert "Traceback" not in stderr
    assert [e["passed"] for e in events if e["type"] == "plan_step_checked"] == [True, True]
    assert events[-1]["success"] is True


def test_a_big_named_file_that_changes_still_falsifies_the_plan(project: Path) -> None:
    """Past the size read whole, a change in the middle (its time moves) or at the end is still noticed."""
    big = project / "big.log"
    big.write_bytes(b"x" * (WHOLE * 4))
    steps = ["Trim `big.log`"]
    seen = fingerprints(project, steps)
    assert seen["big.log"] is not None
    assert falsified(project, steps, seen) is None
    with big.open("r+b") as fh:
        fh.seek(WHOLE * 2)
        fh.write(b"y")
    os.utime(big, ns=(1, 1))
    assert falsified(project, steps, seen) == "big.log, which the plan names, changed underneath"


def test_a_named_fifo_or_folder_counts_as_absent_and_never_blocks(project: Path) -> None:
    """A FIFO a step names is not opened for reading (that would wait for a writer); it is not a file the plan has."""
    os.mkfifo(project / "pipe.txt")
    (project / "folder.d").mkdir()
    assert fingerprints(project, ["Read `pipe.txt` and `folder.d`"]) == {"pipe.txt": None, "folder.d": None}
