"""`chimera replay`: a session played back with no model, with recorded or re-run tools."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.anthropic_harness import serve_fake
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.test_cli import run_chimera
from tests.test_switch import folder_digest


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with serve_fake(monkeypatch) as fake:
        yield fake


def demo_session() -> tuple[str, list[dict[str, object]]]:
    proc = run_chimera("run", "x", "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    return str(events[0]["session_id"]), events


def test_replay_plays_the_recorded_run_back(isolated_env: Path) -> None:
    """Replay emits the same turns, tool calls, results and answer as the recorded run, with no model."""
    session_id, recorded = demo_session()
    proc = run_chimera("replay", session_id, "--json")
    assert proc.returncode == 0, proc.stderr
    replayed = [json.loads(line) for line in proc.stdout.splitlines()]

    def turns(events: list[dict[str, object]]) -> list[tuple[object, ...]]:
        keep = {"turn_started", "message_completed"}
        return [(e["type"], json.dumps(e.get("message"))) for e in events if e["type"] in keep]

    def results(events: list[dict[str, object]]) -> list[tuple[object, ...]]:
        # Read-only calls of one message run concurrently, so their finishing order may differ.
        done = [e for e in events if e["type"] == "tool_call_finished"]
        return sorted((str(e["call_id"]), str(e["output"]), bool(e["is_error"])) for e in done)

    assert turns(replayed) == turns(recorded)
    assert results(replayed) == results(recorded)
    assert replayed[-1]["answer"] == recorded[-1]["answer"]
    assert "replay completed: 1 run" in proc.stderr


def test_replay_rerunning_tools_matches_and_leaves_the_workspace_alone(isolated_env: Path) -> None:
    """--rerun-tools runs every tool again on a scratch copy: all results match, the real files stay put."""
    session_id, recorded = demo_session()
    workdir = Path(str(recorded[0]["workdir"]))
    before = folder_digest(workdir)
    proc = run_chimera("replay", session_id, "--rerun-tools")
    assert proc.returncode == 0, proc.stderr
    assert "5 tool results matched" in proc.stderr
    assert "All 3 tests pass now." in proc.stdout
    assert folder_digest(workdir) == before


def test_replay_stops_at_the_first_divergence_with_a_report(
    api: FakeAnthropic, tmp_path: Path, isolated_env: Path
) -> None:
    """When a re-run tool gives another result, replay stops there and says which call and line differ."""
    outside = tmp_path / "weather.txt"
    outside.write_text("sunny\n")
    workdir = tmp_path / "ws"
    workdir.mkdir()
    api.script(
        message(tool_use("t1", "bash", {"command": "echo start"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": f"cat {outside}"}), stop_reason="tool_use"),
        message(text("It is sunny.")),
    )
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "k", "CHIMERA_MODEL": "claude-sonnet-4-6"}
    run = run_chimera("run", "weather?", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", env=env)
    assert run.returncode == 0, run.stderr
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]
    outside.write_text("rainy\n")
    proc = run_chimera("replay", session_id, "--rerun-tools", "--json")
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "replay stopped (diverged)" in last
    assert "call t2" in last
    assert "recorded 'sunny', now 'rainy'" in last
    finished = json.loads(proc.stdout.splitlines()[-1])
    assert (finished["type"], finished["reason"]) == ("run_finished", "diverged")


def test_replay_of_an_unknown_session_is_one_line(isolated_env: Path) -> None:
    """An unknown id gets one line, exit 2."""
    proc = run_chimera("replay", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "nope" in proc.stderr
