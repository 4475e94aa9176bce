"""A plan's steps reach every reader: ``plan_proposed`` is published even when nobody is asked.

The real ``chimera run --loop plan --json`` against the loopback Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

PLAN = "The plan:\n\n- [ ] Write `out.txt` saying hello\n"
STEPS = ["Write `out.txt` saying hello"]


def plan_run(project: Path, env: dict[str, str], *flags: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = run_here(
        "run", "write out.txt", "--workdir", str(project), "--loop", "plan", "--json",
        "--permission-mode", "bypass", *flags, env=env,
    )  # fmt: skip
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def test_a_plan_approved_by_the_flag_is_still_proposed_with_its_steps(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """--approve-plan: a JSON reader sees plan_proposed with the steps (no question to answer), then plan_approved."""
    api.script(
        message(text(PLAN)),
        message(tool_use("w1", "write", {"path": "out.txt", "content": "hello\n"}), stop_reason="tool_use"),
        message(text("Step 1 is done.")),
        message(text("DONE")),
    )
    code, events, err = plan_run(project, model_env, "--approve-plan")
    assert code == 0, err
    kinds = [e["type"] for e in events]
    proposed = [e for e in events if e["type"] == "plan_proposed"]
    assert len(proposed) == 1
    assert proposed[0]["steps"] == STEPS
    assert proposed[0]["request_id"] == ""  # approved without asking: nothing waits for an answer
    assert kinds.index("plan_proposed") < kinds.index("plan_approved")


def test_a_plan_nobody_can_approve_is_proposed_before_it_is_cancelled(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Headless without --approve-plan: the steps are published, then the run stops naming the flag."""
    api.script(message(text(PLAN)))
    code, events, _ = plan_run(project, model_env)
    assert code == 1
    kinds = [e["type"] for e in events]
    assert [e["steps"] for e in events if e["type"] == "plan_proposed"] == [STEPS]
    assert kinds.index("plan_proposed") < kinds.index("plan_cancelled")
