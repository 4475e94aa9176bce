"""The workspace's lock is the workspace's own, not one Chimera home's: a switch from a second CHIMERA_HOME is
refused while a run from the first works in the same folder."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from tests.cli_runner import assert_one_line_error, chimera_command, run_here
from tests.fake_anthropic import FakeAnthropic, message, stalled, text, tool_use


def _session_with_two_runs(api: FakeAnthropic, env: dict[str, str], project: Path) -> tuple[str, str]:
    """Run 1 writes a.txt v1, run 2 a.txt v2 and b.txt: the session's id, and the node run 1 answered at."""
    api.script(
        message(tool_use("toolu_1", "write", {"path": "a.txt", "content": "v1\n"}), stop_reason="tool_use"),
        message(text("Wrote v1.")),
        message(tool_use("toolu_1", "write", {"path": "a.txt", "content": "v2\n"}), stop_reason="tool_use"),
        message(tool_use("toolu_2", "write", {"path": "b.txt", "content": "made in run 2\n"}), stop_reason="tool_use"),
        message(text("Wrote v2 and b.")),
    )
    flags = ("--workdir", str(project), "--permission-mode", "bypass", "--json")
    first = run_here("run", "one", *flags, env=env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    second = run_here("run", "two", "--resume", session_id, *flags, env=env)
    assert second.returncode == 0, second.stderr
    tree = json.loads(run_here("tree", session_id, "--json", env=env).stdout)
    return session_id, next(n["id"] for n in tree["nodes"] if n["summary"] == "Wrote v1.")


def test_a_switch_from_another_home_waits_for_the_run_working_in_the_folder(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """Home B's session would switch the folder back to before b.txt while home A's run works there: refused in
    one line, and no file is touched."""
    home_b = {**model_env, "CHIMERA_HOME": str(tmp_path / "home-b")}
    session_id, target = _session_with_two_runs(api, home_b, project)
    api.script(stalled())
    other = subprocess.Popen(
        [*chimera_command(), "run", "wait", "--json", "--workdir", str(project)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True,
        env={**os.environ, **model_env, "CHIMERA_HOME": str(tmp_path / "home-a")},
    )  # fmt: skip
    try:
        assert other.stdout is not None
        for line in other.stdout:  # home A's run is talking to the model
            if json.loads(line)["type"] == "turn_started":
                break
        proc = run_here("switch", session_id, target, "--yes", env=home_b)
        assert_one_line_error(proc, f"another process is working in {project} (pid {other.pid} (", "chimera")
        assert (project / "a.txt").read_text() == "v2\n"
        assert (project / "b.txt").read_text() == "made in run 2\n"
    finally:
        other.kill()
        other.communicate()
