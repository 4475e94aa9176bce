"""A key is masked before anything is cut, and wherever it sits: an object's key, a long line, an echoed line.

Each test runs `chimera` (the real command for the first, its ``main`` in the test's process for the
others) against the loopback Messages API with a key
the model or the workspace repeats, and looks for any part of the key long enough
to matter in everything Chimera wrote: stdout, stderr, every file under
CHIMERA_HOME, and every request the model server received.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

from chimera.core.redact import MASK
from tests.cli_runner import chimera_command, run_chimera, run_here
from tests.fake_anthropic import FakeAnthropic, message, status, text, tool_use

KEY = "sk-ant-api03-cut0123456789abcdefghijKLMNOPQRSTUVWXYZ-do-not-leak"
PIECE = 10  # a run of this many characters of the key anywhere is a leak


def key_env(model_env: dict[str, str]) -> dict[str, str]:
    return {**model_env, "ANTHROPIC_API_KEY": KEY}


def everything(proc: subprocess.CompletedProcess[str], home: Path, api: FakeAnthropic) -> dict[str, str]:
    """stdout, stderr, each file under CHIMERA_HOME (entries, events, saved output) and each request sent."""
    found = {"stdout": proc.stdout, "stderr": proc.stderr}
    for path in home.rglob("*"):
        if path.is_file() and "checkpoints.git" not in path.parts:
            found[str(path.relative_to(home))] = path.read_bytes().decode(errors="replace")
    for n, request in enumerate(api.requests):
        found[f"request {n}"] = json.dumps(request.body, ensure_ascii=False)  # its headers carry the key, as they must
    return found


def assert_no_piece_of_the_key(found: dict[str, str]) -> None:
    """No run of PIECE characters of KEY, whole or cut, anywhere Chimera wrote or sent."""
    pieces = {KEY[i : i + PIECE] for i in range(len(KEY) - PIECE + 1)}
    for where, data in found.items():
        leaked = [p for p in pieces if p in data]
        assert not leaked, f"{where} holds part of the key: {sorted(leaked)[:3]}"


def events(proc: subprocess.CompletedProcess[str]) -> list[dict[str, object]]:
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_the_key_as_an_object_key_in_a_tool_call_is_masked_everywhere(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """A tool call whose input has the key as a property name: no event, record or request holds it."""
    api.script(
        message(tool_use("t1", "bash", {"command": "true", KEY: {KEY: 1}}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    proc = run_chimera(
        "run", "x", "--json", "--workdir", str(project), "--permission-mode", "bypass", env=key_env(model_env)
    )
    assert proc.returncode == 0, proc.stderr
    (started,) = [e for e in events(proc) if e["type"] == "tool_call_started"]
    assert started["args"] == {"command": "true", MASK: {MASK: 1}}
    assert_no_piece_of_the_key(everything(proc, isolated_env, api))


def test_a_long_line_read_with_the_key_at_its_cut_is_masked_first(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """`read` cuts a line at 2,000 characters: a key straddling the cut is masked, no part of it shown."""
    (project / "notes.txt").write_text("x" * 1980 + KEY + "y" * 100 + "\n")
    api.script(
        message(tool_use("t1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),
        message(text("Read it.")),
    )
    proc = run_here("run", "x", "--json", "--workdir", str(project), env=key_env(model_env))
    assert proc.returncode == 0, proc.stderr
    (finished,) = [e for e in events(proc) if e["type"] == "tool_call_finished"]
    assert str(finished["output"]).startswith("     1\t" + "x" * 1980 + MASK)
    assert "line cut at 2000" in str(finished["output"])
    assert_no_piece_of_the_key(everything(proc, isolated_env, api))


def test_invalid_tool_input_quoting_the_key_at_its_cut_is_masked_first(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """Input that is not JSON is quoted back cut at 200 characters: the key straddling the cut is masked."""
    raw = '{"command": "' + "a" * 170 + KEY + '"'
    api.script(message(tool_use("t1", "bash", raw_json=raw), stop_reason="tool_use"), message(text("Oops.")))
    proc = run_here("run", "x", "--json", "--workdir", str(project), env=key_env(model_env))
    assert proc.returncode == 0, proc.stderr
    (finished,) = [e for e in events(proc) if e["type"] == "tool_call_finished"]
    assert "were not valid JSON" in str(finished["output"])
    assert_no_piece_of_the_key(everything(proc, isolated_env, api))


def test_a_bad_control_line_echoed_with_the_key_at_its_cut_is_masked_first(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """The control channel echoes a bad line cut at 200 characters: a key straddling the cut is masked."""
    api.script(message(text("Done.")))
    bad = "not json " + "b" * 170 + KEY
    proc = subprocess.run(
        [*chimera_command(), "run", "x", "--json", "--control", "-", "--workdir", str(project)],
        input=bad + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **key_env(model_env)},
    )
    assert proc.returncode == 0, proc.stderr
    (error,) = [e for e in events(proc) if e["type"] == "error"]
    assert str(error["line"]).startswith("not json " + "b" * 170 + MASK[:10])
    assert_no_piece_of_the_key(everything(proc, isolated_env, api))


def test_agents_md_cut_with_the_key_at_its_end_is_masked_first(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """AGENTS.md is cut at 20,000 characters for the system prompt: a key straddling the cut never reaches the model."""
    (project / "AGENTS.md").write_text("z" * 19_980 + KEY + "\n")
    api.script(message(text("Hello.")))
    proc = run_here("run", "x", "--json", "--workdir", str(project), env=key_env(model_env))
    assert proc.returncode == 0, proc.stderr
    assert MASK in json.dumps(api.requests[0].body["system"])
    assert_no_piece_of_the_key(everything(proc, isolated_env, api))


def test_a_server_error_quoting_the_key_at_its_cut_is_masked_first(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """A server's error message is cut at 300 characters: a key straddling the cut shows nowhere."""
    api.script(status(403, "permission_error", "c" * 280 + KEY + " may not use this model"))
    proc = run_here("run", "x", "--json", "--workdir", str(project), env=key_env(model_env))
    assert proc.returncode == 2, proc.stderr
    assert_no_piece_of_the_key(everything(proc, isolated_env, api))


def test_a_replay_naming_a_call_it_keeps_masks_its_command_before_cutting_it(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """A recorded command holding the replaying process's key, named as not re-run (cut at 100): no part shows."""
    command = 'echo "' + "a" * 80 + KEY + '"'
    api.script(message(tool_use("t1", "bash", {"command": command}), stop_reason="tool_use"), message(text("Ok.")))
    run = run_here("run", "x", "--json", "--workdir", str(project), env=model_env)  # recorded with another key
    assert run.returncode == 0, run.stderr
    session_id = json.loads(run.stdout.splitlines()[0])["session_id"]
    proc = run_here("replay", session_id, "--rerun-tools", env=key_env(model_env))
    assert proc.returncode == 0, proc.stderr
    assert "not re-run" in proc.stderr
    assert_no_piece_of_the_key({"stdout": proc.stdout, "stderr": proc.stderr})
