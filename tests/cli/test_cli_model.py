"""`chimera run` against a real Messages API server on loopback: exit codes, one-line errors, no leaked key."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.fake_anthropic import FakeAnthropic, message, page, status, text, tool_use

SECRET = "sk-ant-test-0123456789-do-not-leak"
DOCUMENTED_DEFAULT_MODEL = "claude-sonnet-5-5"  # README.md: the model with neither --model nor CHIMERA_MODEL


def test_run_against_a_server_succeeds_and_never_writes_the_key(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """A model run exits 0; the key reaches neither the tools, the events nor any file under CHIMERA_HOME."""
    # The shell's parent is the call's supervisor; Chimera, whose environment holds the key, is above it.
    parents = "$PPID $(cut -d' ' -f4 /proc/$PPID/stat)"
    environs = f"for p in {parents} self; do tr '\\0' '\\n' < /proc/$p/environ; done"
    snoop = f"env; echo; {environs}"
    api.script(
        message(text("Checking the environment."), tool_use("t1", "bash", {"command": snoop}), stop_reason="tool_use"),
        message(text("All good.")),
    )
    proc = run_chimera(
        "run",
        "look around",
        "--json",
        "--workdir",
        str(tmp_path),
        "--permission-mode",
        "bypass",
        env={**model_env, "ANTHROPIC_API_KEY": SECRET},
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[0]["model"] == "claude-sonnet-4-6"
    assert events[-1]["answer"] == "All good."
    env_output = next(e["output"] for e in events if e["type"] == "tool_call_finished")
    assert env_output.count("PATH=") >= 2  # the command did print the environments it could see
    assert "[secret removed]" not in env_output  # no environment it could read held the key: nothing was masked
    assert SECRET not in proc.stdout
    assert SECRET not in proc.stderr
    for path in isolated_env.rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), f"the key was written to {path}"
    assert api.requests[0].headers.get("authorization") == f"Bearer {SECRET}"


def recorded(home: Path, session_id: str) -> tuple[list[str], dict[str, tuple[object, ...]]]:
    """The session's active path (node ids), and every node's parent, kind, time and message by id."""
    with SessionStore.open(home, session_id, writable=False) as store:
        path = [n.id for n in store.tree.path()]
        return path, {n.id: (n.parent_id, n.kind, n.ts, n.message) for n in store.tree.nodes.values()}


def test_default_model_is_sent_when_none_is_configured(api: FakeAnthropic, tmp_path: Path) -> None:
    """With neither --model nor CHIMERA_MODEL, the request and run_started carry the documented default model."""
    api.script(message(text("Hello.")))
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": SECRET}
    proc = run_here("run", "x", "--json", "--workdir", str(tmp_path), env=env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert events[0]["type"] == "run_started"
    assert events[0]["model"] == DOCUMENTED_DEFAULT_MODEL
    assert len(api.requests) == 1
    assert api.requests[0].body["model"] == DOCUMENTED_DEFAULT_MODEL


def test_a_resumed_run_that_fails_at_the_first_request_loses_nothing_recorded(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """A 401 on `--resume` ends with one line, exit 2, and every node recorded before is still there, unchanged."""
    api.script(
        message(text("Looking."), tool_use("t1", "glob", {"pattern": "*"}), stop_reason="tool_use"),
        message(text("Noted: 42.")),
    )
    first = run_here("run", "remember 42", "--json", "--workdir", str(tmp_path), env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    path_before, before = recorded(isolated_env, session_id)
    assert [before[i][1] for i in path_before] == ["user", "assistant", "tool_result", "assistant"]

    api.script(status(401, "authentication_error", "invalid x-api-key"))
    second = run_here("run", "more", "--resume", session_id, env=model_env)
    assert_one_line_error(second, "ANTHROPIC_API_KEY", "401")
    assert len(api.requests) == 3

    path_after, after = recorded(isolated_env, session_id)
    assert {i: after.get(i) for i in before} == before
    assert path_after[: len(path_before)] == path_before


def test_rejected_key_is_one_line_and_exit_2(api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path) -> None:
    """A 401 ends the run at once with one line telling how to fix the key, exit 2."""
    api.script(status(401, "authentication_error", "invalid x-api-key"))
    proc = run_here("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert_one_line_error(proc, "ANTHROPIC_API_KEY", "401")
    assert len(api.requests) == 1


def test_unknown_model_is_one_line_and_exit_2(api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path) -> None:
    """A 404 for the model ends with one line naming the model and the flag to change it, exit 2."""
    api.script(status(404, "not_found_error", "model: claude-nope"))
    proc = run_here("run", "x", "--workdir", str(tmp_path), "--model", "claude-nope", env=model_env)
    assert_one_line_error(proc, "claude-nope", "--model")


def test_a_web_page_where_the_api_should_be_is_one_line_and_exit_2(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """A 200 HTML page at ANTHROPIC_BASE_URL ends at once, not retried: one line naming the URL and the fix, exit 2."""
    api.fallback = page("<!doctype html>\n<html><body>Welcome to nginx!</body></html>\n")
    proc = run_here("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert_one_line_error(proc, f"{api.url}/v1/messages answered with an HTML page", "ANTHROPIC_BASE_URL")
    assert len(api.requests) == 1


def test_bad_request_fails_the_run_with_exit_1(api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path) -> None:
    """A 400 is not retried: the run fails (exit 1) with the server's reason on stderr."""
    api.script(status(400, "invalid_request_error", "messages: roles must alternate"))
    proc = run_here("run", "x", "--workdir", str(tmp_path), env=model_env)
    assert proc.returncode == 1
    assert "roles must alternate" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert len(api.requests) == 1


def test_max_turns_fails_the_run_with_exit_1(api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path) -> None:
    """Hitting --max-turns exits 1 and says how to let it go on."""
    api.script(*[message(tool_use(f"t{i}", "glob", {"pattern": "*"}), stop_reason="tool_use") for i in range(2)])
    proc = run_here("run", "x", "--workdir", str(tmp_path), "--max-turns", "2", "--json", env=model_env)
    assert proc.returncode == 1
    finished = json.loads(proc.stdout.splitlines()[-1])
    assert (finished["success"], finished["reason"], finished["steps"]) == (False, "max_turns", 2)
    assert "--max-turns" in proc.stderr


def test_headless_ask_refuses_with_the_flag_that_allows(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """In the default ask mode a headless run never hangs: a command is refused, naming the flags."""
    api.script(
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("I could not run it.")),
    )
    proc = run_here("run", "x", "--json", "--workdir", str(tmp_path), env=model_env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    decided = next(e for e in events if e["type"] == "permission_decided")
    assert decided["decision"] == "deny"
    assert "--permission-mode bypass" in decided["reason"]
    assert "--allow" in decided["reason"]
    result = next(e for e in events if e["type"] == "tool_call_finished")
    assert result["is_error"] is True
    assert result["output"].startswith("Error: not permitted")
    assert not (tmp_path / "made-it").exists()


def test_allow_rule_lets_a_matching_command_run(api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path) -> None:
    """--allow 'bash(touch *)' lets that command run in ask mode while others stay refused."""
    api.script(
        message(
            tool_use("t1", "bash", {"command": "touch made-it"}),
            tool_use("t2", "bash", {"command": "rm -f other"}),
            stop_reason="tool_use",
        ),
        message(text("Done.")),
    )
    (tmp_path / "other").write_text("keep me")
    proc = run_here("run", "x", "--json", "--workdir", str(tmp_path), "--allow", "bash(touch *)", env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "made-it").exists()
    assert (tmp_path / "other").read_text() == "keep me"


def test_plan_mode_refuses_writes_whatever_the_model_sends(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """--permission-mode plan: write, edit and bash are refused by the executor, reads still run."""
    (tmp_path / "a.txt").write_text("hello\n")
    api.script(
        message(
            tool_use("t1", "read", {"path": "a.txt"}),
            tool_use("t2", "write", {"path": "b.txt", "content": "x"}),
            tool_use("t3", "edit", {"path": "a.txt", "old": "hello", "new": "bye"}),
            tool_use("t4", "bash", {"command": "touch c.txt"}),
            stop_reason="tool_use",
        ),
        message(text("Planned.")),
    )
    proc = run_here(
        "run",
        "x",
        "--json",
        "--workdir",
        str(tmp_path),
        "--permission-mode",
        "plan",
        "--allow",
        "bash",
        env=model_env,
    )
    assert proc.returncode == 0, proc.stderr
    results = {e["call_id"]: e for e in map(json.loads, proc.stdout.splitlines()) if e["type"] == "tool_call_finished"}
    assert results["t1"]["is_error"] is False
    for call_id in ("t2", "t3", "t4"):
        assert "plan mode is read-only" in results[call_id]["output"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "hello\n"
