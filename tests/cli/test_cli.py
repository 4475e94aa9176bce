"""`chimera` on the command line: the headless demo end to end, exit codes, and one-line errors."""

from __future__ import annotations

import json
import os
import socket
import stat
import time
from pathlib import Path

import pytest

from tests.cli_runner import assert_one_line_error, run_chimera, run_here


def test_run_json_plays_the_demo_end_to_end(isolated_env: Path) -> None:
    """With no model configured, `chimera run --json` replays the demo, fixes the sample project and exits 0."""
    proc = run_chimera("run", "fix it", "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert all({"type", "run_id", "session_id", "seq", "ts"} <= set(e) for e in events)
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    kinds = [e["type"] for e in events]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
    assert {
        "turn_started",
        "text_delta",
        "thinking_delta",
        "message_completed",
        "usage",
        "tool_call_started",
        "tool_call_finished",
    } <= set(kinds)
    finished = events[-1]
    assert finished["success"] is True
    assert finished["reason"] == "completed"
    assert finished["steps"] == 5
    assert "All 3 tests pass" in finished["answer"]
    # The tools ran for real: the last test run passed, and the file on disk is fixed.
    runs = [e for e in events if e["type"] == "tool_call_finished" and e["name"] == "bash"]
    assert "FAILED" in runs[0]["output"]
    assert runs[-1]["output"].rstrip().endswith("OK")
    workdir = Path(events[0]["workdir"])
    assert "(ordered[mid - 1] + ordered[mid]) / 2" in (workdir / "stats.py").read_text()
    assert workdir.is_relative_to(isolated_env)
    # The demo says so, on stderr, with the way to connect a model.
    assert "Demo mode" in proc.stderr
    assert "ANTHROPIC_API_KEY" in proc.stderr
    assert "ANTHROPIC_BASE_URL" in proc.stderr


def test_a_chimera_home_that_is_a_link_keeps_its_targets_mode(tmp_path: Path) -> None:
    """CHIMERA_HOME is a link to a folder of the person's (mode 0755): used as it is, its mode never changed;
    the folders Chimera makes inside it are private."""
    target = tmp_path / "synced-state"
    target.mkdir()
    target.chmod(0o755)
    (tmp_path / "home-link").symlink_to(target, target_is_directory=True)
    proc = run_here("run", "x", "--json", env={"CHIMERA_HOME": str(tmp_path / "home-link")})
    assert proc.returncode == 0, proc.stderr
    assert stat.S_IMODE(target.stat().st_mode) == 0o755
    assert stat.S_IMODE((target / "sessions").stat().st_mode) == 0o700


def test_run_records_the_session_privately(isolated_env: Path) -> None:
    """A run leaves its session under CHIMERA_HOME, readable by its owner only: the tree and the events."""
    proc = run_chimera("run", "x", "--json")
    assert proc.returncode == 0, proc.stderr
    session_id = json.loads(proc.stdout.splitlines()[0])["session_id"]
    folder = isolated_env / "sessions" / session_id
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    for name in ("entries.jsonl", "events.jsonl"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600
    recorded = [json.loads(line)["type"] for line in (folder / "events.jsonl").read_text().splitlines()]
    assert recorded[0] == "run_started"
    assert recorded[-1] == "run_finished"
    assert "message_completed" in recorded
    records = [json.loads(line) for line in (folder / "entries.jsonl").read_text().splitlines()]
    assert records[0]["t"] == "meta"
    kinds = [r["kind"] for r in records if r["t"] == "node"]
    assert kinds == ["user"] + ["assistant", "tool_result"] * 4 + ["assistant"]


def test_run_in_text_mode_prints_the_answer(isolated_env: Path) -> None:
    """Without --json the answer streams to stdout and tool activity goes to stderr."""
    proc = run_chimera("run", "x")
    assert proc.returncode == 0, proc.stderr
    assert "All 3 tests pass now." in proc.stdout
    assert "● bash" in proc.stderr


def test_help_answers(isolated_env: Path) -> None:
    """`chimera --help` and `chimera run --help` describe the commands and exit 0."""
    top = run_chimera("--help")
    assert top.returncode == 0
    assert "run" in top.stdout
    assert "ANTHROPIC_BASE_URL" in top.stdout
    sub = run_chimera("run", "--help")
    assert sub.returncode == 0
    assert "--json" in sub.stdout
    assert "--max-turns" in sub.stdout


def test_bad_flag_is_one_line_and_exit_2(isolated_env: Path) -> None:
    """An unknown flag gets one line naming it and pointing at --help."""
    assert_one_line_error(run_chimera("run", "x", "--bogus"), "--bogus", "--help")


def test_bad_choice_is_one_line_and_exit_2(isolated_env: Path) -> None:
    """An unknown loop name gets one line listing the choices."""
    assert_one_line_error(run_chimera("run", "x", "--loop", "nope"), "react")


def test_bad_max_turns_is_one_line(isolated_env: Path) -> None:
    """--max-turns 0 is refused with one line."""
    assert_one_line_error(run_chimera("run", "x", "--max-turns", "0"), "--max-turns")


def test_missing_workdir_is_one_line_and_exit_2(isolated_env: Path, tmp_path: Path) -> None:
    """A workdir that does not exist gets one line naming it."""
    missing = tmp_path / "nope"
    assert_one_line_error(run_chimera("run", "x", "--workdir", str(missing)), str(missing), "--workdir")


def test_workbench_bad_flag_is_one_line_and_exit_2(isolated_env: Path) -> None:
    """`chimera --bogus` gets one line naming the flag and pointing at --help; the workbench never opens."""
    proc = run_chimera("--bogus", timeout=30)  # a workbench that opened would wait for input, not exit
    assert_one_line_error(proc, "--bogus", "--help")
    assert proc.stdout == ""


def test_workbench_missing_workdir_is_one_line_and_exit_2(isolated_env: Path, tmp_path: Path) -> None:
    """`chimera --workdir` with a folder that does not exist gets one line naming it; the workbench never opens."""
    missing = tmp_path / "nope"
    proc = run_chimera("--workdir", str(missing), timeout=30)  # an opened workbench would not exit
    assert_one_line_error(proc, str(missing), "--workdir")
    assert proc.stdout == ""


def test_unreachable_server_is_one_line_and_exit_2(isolated_env: Path, tmp_path: Path) -> None:
    """ANTHROPIC_BASE_URL pointing at nothing ends with one line naming the URL, exit 2."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    proc = run_chimera("run", "x", "--workdir", str(tmp_path), env={"ANTHROPIC_BASE_URL": url})
    assert_one_line_error(proc, url, "ANTHROPIC_BASE_URL")


@pytest.mark.parametrize("value", ["maybe", "12", "8000²", "9" * 5000])
def test_bad_thinking_setting_is_one_line(isolated_env: Path, tmp_path: Path, value: str) -> None:
    """A CHIMERA_THINKING value that makes no sense is refused before any request."""
    proc = run_chimera(
        "run",
        "x",
        "--workdir",
        str(tmp_path),
        env={"ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "CHIMERA_THINKING": value},
    )
    assert_one_line_error(proc, "CHIMERA_THINKING")


def test_old_demo_copies_are_cleared(isolated_env: Path) -> None:
    """A demo copy older than a day is removed when a new demo starts; a recent one stays."""
    from chimera.core.demo import prepare_demo_workspace

    parent = isolated_env / "demo"
    old, recent = prepare_demo_workspace(parent), prepare_demo_workspace(parent)
    two_days_ago = time.time() - 2 * 24 * 3600
    os.utime(old, (two_days_ago, two_days_ago))
    fresh = prepare_demo_workspace(parent)
    assert not old.exists()
    assert recent.exists()
    assert (fresh / "stats.py").is_file()
