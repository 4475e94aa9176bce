"""`chimera replay`: a session played back with no model, with recorded or re-run tools."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.switch_helpers import folder_digest


def demo_session() -> tuple[str, list[dict[str, object]]]:
    proc = run_here("run", "x", "--json")
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


def test_replayed_events_carry_the_replayed_sessions_id(isolated_env: Path) -> None:
    """`chimera replay PREFIX --json`: every event carries the whole id of the session it plays, not a new one;
    each run replayed has its own run id, and no event stands at a node (a replay records nothing)."""
    session_id, recorded = demo_session()
    proc = run_here("replay", session_id[:8], "--json")
    assert proc.returncode == 0, proc.stderr
    replayed = [json.loads(line) for line in proc.stdout.splitlines()]
    assert {e["session_id"] for e in replayed} == {session_id}
    assert {e["node_id"] for e in replayed} == {None}
    assert {e["run_id"] for e in replayed}.isdisjoint({e["run_id"] for e in recorded})


def test_replay_rerunning_tools_matches_and_leaves_the_workspace_alone(isolated_env: Path) -> None:
    """--rerun-tools runs every tool again on a scratch copy: all results match, the real files stay put."""
    session_id, recorded = demo_session()
    workdir = Path(str(recorded[0]["workdir"]))
    before = folder_digest(workdir)
    proc = run_here("replay", session_id, "--rerun-tools")
    assert proc.returncode == 0, proc.stderr
    assert "5 tool results matched" in proc.stderr
    assert "All 3 tests pass now." in proc.stdout
    assert folder_digest(workdir) == before


def test_replay_stops_at_the_first_divergence_with_a_report(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """When a re-run tool gives another result, replay stops there and says which call and line differ."""
    workdir = tmp_path / "ws"
    workdir.mkdir()
    api.script(
        message(tool_use("t1", "bash", {"command": "echo start"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": 'echo "$WEATHER"'}), stop_reason="tool_use"),
        message(text("It is sunny.")),
    )
    run = run_here(
        "run",
        "weather?",
        "--json",
        "--workdir",
        str(workdir),
        "--permission-mode",
        "bypass",
        env={**model_env, "WEATHER": "sunny"},
    )
    assert run.returncode == 0, run.stderr
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]
    proc = run_here("replay", session_id, "--rerun-tools", "--json", env={"WEATHER": "rainy"})
    assert proc.returncode == 1
    last = proc.stderr.strip().splitlines()[-1]
    assert "replay stopped (diverged)" in last
    assert "call t2" in last
    assert "recorded 'sunny', now 'rainy'" in last
    finished = json.loads(proc.stdout.splitlines()[-1])
    assert (finished["type"], finished["reason"]) == ("run_finished", "diverged")


def test_replay_of_an_unknown_session_is_one_line(isolated_env: Path) -> None:
    """An unknown id gets one line, exit 2."""
    proc = run_here("replay", "nope")
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0
    assert "nope" in proc.stderr


# --- re-running only what ran, where it ran (issue 9, item 4) --------------------------------


def recorded_run(model_env: dict[str, str], workdir: Path, task: str, *flags: str) -> str:
    """Run ``task`` against the scripted server; the session id."""
    proc = run_here("run", task, "--json", "--workdir", str(workdir), *flags, env=model_env)
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout.splitlines()[0])["session_id"])


def test_rerun_runs_only_what_ran_when_recorded_and_only_in_the_scratch_copy(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """--rerun-tools never runs a call refused when recorded, nor one that names the real workspace."""
    marker = tmp_path / "refused-marker"
    workdir = tmp_path / "ws"
    workdir.mkdir()
    api.script(
        message(tool_use("t1", "bash", {"command": f"touch {marker}"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": f"echo recorded > {workdir}/note.txt"}), stop_reason="tool_use"),
        message(
            tool_use("t3", "bash", {"command": "echo inside > inside.txt && cat inside.txt"}), stop_reason="tool_use"
        ),
        message(text("Done.")),
    )
    session_id = recorded_run(model_env, workdir, "go", "--permission-mode", "bypass", "--deny", "bash(touch *)")
    assert not marker.exists()  # refused when recorded
    (workdir / "note.txt").write_text("the person's own words\n")

    proc = run_here("replay", session_id, "--rerun-tools")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert (workdir / "note.txt").read_text() == "the person's own words\n"
    kept = [line for line in proc.stderr.splitlines() if "not re-run" in line]
    assert len(kept) == 2, proc.stderr
    assert "call t1" in kept[0]
    assert "refused when recorded" in kept[0]
    assert "call t2" in kept[1]
    assert f"names {workdir}, outside the scratch copy" in kept[1]
    # The call that ran inside the workspace under the recorded bypass mode did run again, and matched.
    assert "replay completed: 1 run, 1 tool results matched, 2 kept as recorded" in proc.stderr

    # A session recorded before permissions were kept is replayed as strictly as `ask` mode.
    entries = isolated_env / "sessions" / session_id / "entries.jsonl"
    lines = [line for line in entries.read_text().splitlines(keepends=True) if '"permissions"' not in line]
    entries.write_text("".join(lines))
    older = run_here("replay", session_id, "--rerun-tools")
    assert older.returncode == 0, older.stderr
    assert "call t3" in older.stderr
    assert "ask first, and a replay cannot ask" in older.stderr
    assert "0 tool results matched, 3 kept as recorded" in older.stderr
    assert not marker.exists()


@pytest.mark.parametrize(
    ("name", "args", "recorded", "why"),
    [
        ("bash", {"command": "rm -rf x"}, "Error: not permitted: bash is denied by the rule bash", "refused"),
        ("bash", {"command": "make"}, "Error: the person declined to run this bash call; ask", "declined"),
        ("bash", {"command": "make"}, "Error: not run: stopped at the budget", "not run when recorded"),
        ("bash", {"command": "make"}, "Cancelled: the run was stopped", "did not finish"),
        ("bash", {"command": "cat /etc/hostname"}, "x", "names /etc/hostname"),
        ("bash", {"command": "cat ../secret"}, "x", "names .."),
        ("bash", {"command": "echo x > a/../../out"}, "x", "names .."),
        ("bash", {"command": "find / -name x"}, "x", "names /,"),
        ("bash", {"command": "touch $CHIMERA_HOME/x"}, "x", "names $CHIMERA_HOME"),
        ("bash", {"command": "cp a ~/b"}, "x", "names ~/b"),
        ("bash", {"command": 'echo hi > "$HOME/x"'}, "x", "names $HOME"),
        ("bash", {"command": "cd && touch x"}, "x", "the home folder"),
        ("bash", {"command": "python3 -m unittest -v 2>&1 | tail -n 20"}, "OK", None),
        ("bash", {"command": "curl -s https://example.com/a | wc -l"}, "1", None),
        ("bash", {"command": "--ORIGINAL--"}, "x", "names --ORIGINAL--"),
        ("write", {"path": "--ORIGINAL--/a.txt", "content": "x"}, "Created a.txt", "outside the scratch copy"),
        ("read", {"path": "../up.txt"}, "x", "names ../up.txt"),
        ("bash", {"command": "make 2>/dev/null | tail -n 3"}, "ok", None),
        ("write", {"path": "sub/../a.txt", "content": "x"}, "Created a.txt", None),
    ],
)
def test_which_recorded_calls_may_run_again(
    tmp_path: Path, name: str, args: dict[str, str], recorded: str, why: str | None
) -> None:
    """A call is re-run only if it ran when recorded and names nothing outside the scratch copy."""
    from chimera.core.permissions.policy import PermissionPolicy
    from chimera.core.sessions.replay import why_not_rerun
    from chimera.core.tool_group import DEFAULT_TOOLS
    from chimera.core.tools.base import ToolResult, status_of_text
    from chimera.core.tools.executor import ToolCall

    original, scratch = tmp_path / "original", tmp_path / "scratch"
    original.mkdir()
    scratch.mkdir()
    args = {k: v.replace("--ORIGINAL--", str(original)) for k, v in args.items()}
    call = ToolCall("c1", name, args)
    failed = recorded.startswith(("Error:", "Cancelled:"))
    result = ToolResult(recorded, failed, status=status_of_text(recorded, failed))  # as a replay reads it back
    said = why_not_rerun(call, result, PermissionPolicy("bypass"), DEFAULT_TOOLS, original, scratch)
    if why is None:
        assert said is None
    else:
        assert said is not None
        assert why.replace("--ORIGINAL--", str(original)) in said


# --- every branch, run by run (issue 9, item 16) ---------------------------------------------


def replayed(proc: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_replay_plays_every_branch_of_a_switched_and_resumed_session(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """Run, switch back to mid-run, resume with a second task: each branch replays, each run with its own turns."""
    workdir = tmp_path / "ws"
    workdir.mkdir()
    api.script(
        message(tool_use("a1", "write", {"path": "a.txt", "content": "one\n"}), stop_reason="tool_use"),
        message(text("Task A done.")),
    )
    session_id = recorded_run(model_env, workdir, "task A", "--permission-mode", "bypass")
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        first = [node.id for node in store.tree.path()]  # user, assistant, tool_result, assistant
    assert run_here("switch", session_id, first[2], "--yes").returncode == 0
    assert run_here("checkpoint", session_id, "after-write", "--node", first[2]).returncode == 0
    api.script(
        message(tool_use("b1", "bash", {"command": "cat a.txt"}), stop_reason="tool_use"),
        message(text("Task B done: it says one.")),
    )
    resumed = run_here("run", "task B", "--json", "--resume", session_id, "--permission-mode", "bypass", env=model_env)
    assert resumed.returncode == 0, resumed.stderr

    def ends(events: list[dict[str, object]]) -> list[tuple[object, ...]]:
        return [(e["reason"], e["answer"]) for e in events if e["type"] == "run_finished"]

    proc = run_here("replay", session_id, "--json")
    assert ends(replayed(proc)) == [("recording_ended", ""), ("completed", "Task B done: it says one.")]
    assert "replay completed: 2 runs" in proc.stderr
    other = run_here("replay", session_id, "--json", "--node", first[3])
    assert ends(replayed(other)) == [("completed", "Task A done.")]
    rerun = run_here("replay", session_id, "--rerun-tools")
    assert rerun.returncode == 0, rerun.stderr
    assert "2 runs, 2 tool results matched, 0 kept as recorded" in rerun.stderr
    assert "it says one." in rerun.stdout
    # Stopping at a node mid-run is where that branch's recording stops: said so, with nothing to raise.
    mid = run_here("replay", session_id, "--node", "after-write")
    assert mid.returncode == 0, mid.stderr
    last = mid.stderr.strip().splitlines()[-1]
    assert f"replay completed: 1 run; it ends at node {first[2]}" in last
    assert "--max-turns" not in mid.stderr + mid.stdout
    assert_one_line_error(run_here("replay", session_id, "--node", "nope"), "nope", f"chimera tree {session_id}")


# --- replay masks the key as a live run does -------------------------------------------------

KEY = "sk-ant-replay-0123456789-never-shown"


def test_rerun_compares_masked_outputs_and_never_shows_the_key(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """A re-run command that prints the key matches its masked recording; a real divergence quotes it masked."""
    workdir = tmp_path / "ws"
    workdir.mkdir()
    (workdir / "key.txt").write_text(KEY + "\n")
    api.script(
        message(tool_use("t1", "bash", {"command": "cat key.txt"}), stop_reason="tool_use"),
        message(
            tool_use("t2", "bash", {"command": """printf '%s ' "$WEATHER"; cat key.txt"""}), stop_reason="tool_use"
        ),
        message(text("Done.")),
    )
    env = {**model_env, "ANTHROPIC_API_KEY": KEY, "WEATHER": "sunny"}
    run = run_here("run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", env=env)
    assert run.returncode == 0, run.stderr
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]
    outputs = [e["output"] for e in map(json.loads, run.stdout.splitlines()) if e["type"] == "tool_call_finished"]
    assert outputs == ["[secret removed]\n", "sunny [secret removed]\n"]  # as the live run recorded them

    same = run_here("replay", session_id, "--rerun-tools", "--json", env={"ANTHROPIC_API_KEY": KEY, "WEATHER": "sunny"})
    assert same.returncode == 0, same.stderr
    assert "2 tool results matched" in same.stderr
    assert KEY not in same.stdout + same.stderr
    assert "[secret removed]" in same.stdout

    other = run_here("replay", session_id, "--rerun-tools", env={"ANTHROPIC_API_KEY": KEY, "WEATHER": "rainy"})
    assert other.returncode == 1
    assert KEY not in other.stdout + other.stderr
    last = other.stderr.strip().splitlines()[-1]
    assert "recorded 'sunny [secret removed]', now 'rainy [secret removed]'" in last


def test_plain_replay_masks_a_key_the_recording_holds(isolated_env: Path, tmp_path: Path) -> None:
    """A session holding the raw key (recorded without it known) replays with the key masked, in text and JSON."""
    with SessionStore.create(isolated_env, "s1", workdir=tmp_path, model="claude-sonnet-4-6") as store:
        store.add("user", {"role": "user", "content": f"use {KEY}"}, sync=True)
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": f"The key is {KEY}."}]})
    for flags in ([], ["--json"]):
        proc = run_here("replay", "s1", *flags, env={"ANTHROPIC_API_KEY": KEY})
        assert proc.returncode == 0, proc.stderr
        assert KEY not in proc.stdout + proc.stderr
        assert "The key is [secret removed]." in proc.stdout
