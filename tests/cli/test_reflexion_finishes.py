"""``--loop reflexion`` finishes the task it started: a text-only reply to the reflection prompt is the
model's reflection, a note, and the run goes on with the task; the turn limit still bounds it.

The real ``chimera run`` against the loopback Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chimera.core.loops.reflexion import CONTINUE_PROMPT, REFLECTION_PROMPT
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use

BUG = "def add(a, b):\n    return a - b\n"
FIXED = "def add(a, b):\n    return a + b\n"


def reflexion(project: Path, env: dict[str, str], *flags: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = run_here(
        "run", "add() in calc.py subtracts: fix it", "--workdir", str(project), "--loop", "reflexion",
        "--reflect-every", "1", "--permission-mode", "bypass", "--json", *flags, env=env,
    )  # fmt: skip
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def read_calc() -> Reply:
    return message(tool_use("r1", "read", {"path": "calc.py"}), stop_reason="tool_use")


def test_a_reply_to_the_reflection_is_a_note_and_the_run_goes_on_to_fix_the_bug(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """ "Next, fix the bug." answering the reflection does not end the run: the model is asked to go on and fixes it."""
    (project / "calc.py").write_text(BUG)
    api.script(
        read_calc(),
        message(text("The read worked. Next, fix the bug.")),  # the reflection: a note, not the answer
        message(tool_use("e1", "edit", {"path": "calc.py", "old": "a - b", "new": "a + b"}), stop_reason="tool_use"),
        message(text("The edit worked; nothing else to change.")),  # the second reflection
        message(text("Fixed: add() adds.")),  # an answer that replies to no reflection: the end
    )
    code, events, err = reflexion(project, model_env)
    assert code == 0, err
    assert (project / "calc.py").read_text() == FIXED
    assert events[-1]["answer"] == "Fixed: add() adds."
    assert len(api.requests) == 5
    asked = [json.dumps(r.messages[-1]) for r in api.requests]
    assert REFLECTION_PROMPT in asked[1]
    assert CONTINUE_PROMPT in asked[2]  # after the reflection, back to the task
    assert REFLECTION_PROMPT in asked[3]
    assert CONTINUE_PROMPT in asked[4]


def test_a_model_that_only_ever_reflects_is_stopped_by_the_turn_limit(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Calls and reflections for ever: --max-turns ends the run (exit 1, max_turns), never an endless loop."""
    (project / "calc.py").write_text(BUG)
    api.script(*[read_calc() if turn % 2 == 0 else message(text("Reflecting, again.")) for turn in range(6)])
    code, events, _ = reflexion(project, model_env, "--max-turns", "6")
    assert code == 1
    assert events[-1]["reason"] == "max_turns"
    assert len(api.requests) == 6


def test_a_replay_goes_on_past_the_reflection_as_the_run_did(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """`chimera replay ID`: the reflection's reply ends no run; every turn plays back, to the fix (it stopped there)."""
    (project / "calc.py").write_text(BUG)
    api.script(
        read_calc(),
        message(text("The read worked. Next, fix the bug.")),
        message(tool_use("e1", "edit", {"path": "calc.py", "old": "a - b", "new": "a + b"}), stop_reason="tool_use"),
        message(text("The edit worked; nothing else to change.")),
        message(text("Fixed: add() adds.")),
    )
    code, events, err = reflexion(project, model_env)
    assert code == 0, err
    replayed = run_here("replay", events[0]["session_id"], "--json")
    assert replayed.returncode == 0, replayed.stderr
    played = [json.loads(line) for line in replayed.stdout.splitlines()]
    assert sum(e["type"] == "message_completed" for e in played) == 5
    assert [e["answer"] for e in played if e["type"] == "run_finished"] == ["Fixed: add() adds."]
