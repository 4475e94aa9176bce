"""PlanAndExecute end to end: `chimera run --loop plan` (its ``main``, in the test's process), the Python API and
the workbench, against the loopback Messages API with the real client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.events import PlanStepChecked, StepEvent
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.plan_execute import EXECUTE_PROMPT, PlanAndExecute
from chimera.core.providers.factory import create_provider
from chimera.core.sessions.start import RunOptions
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.tui.app import build_app
from chimera.tui.widgets.plan_panel import PlanPanel
from tests.cli_runner import run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import answering, screen_text, send, until

EDITED = "hello\nworld\n"
PLAN = "Here is the plan:\n\n- [ ] Write `out.txt` saying hello\n- [ ] Add a second line to `out.txt`\n"


@pytest.fixture
def notes_project(project: Path) -> Path:
    """The project holding notes.txt."""
    (project / "notes.txt").write_text("the notes\n")
    return project


def run_plan(model_env: dict[str, str], project: Path, *flags: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = run_here(
        "run", "write out.txt", "--workdir", str(project), "--loop", "plan", "--json",
        "--permission-mode", "bypass", *flags, env=model_env,
    )  # fmt: skip
    return proc.returncode, [json.loads(line) for line in proc.stdout.splitlines()], proc.stderr


def of_type(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == kind]


def tool_names(body: dict[str, Any]) -> set[str]:
    return {t["name"] for t in body.get("tools", [])}


def two_steps() -> list[Any]:
    return [
        message(tool_use("p1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),  # planning may look
        message(text(PLAN)),
        message(tool_use("w1", "write", {"path": "out.txt", "content": "hello\n"}), stop_reason="tool_use"),
        message(text("Step 1 is done.")),
        message(text("DONE")),
        message(tool_use("e1", "edit", {"path": "out.txt", "old": "hello\n", "new": EDITED}), stop_reason="tool_use"),
        message(text("Step 2 is done.")),
        message(text("DONE: out.txt has two lines")),
    ]  # fmt: skip


def test_a_plan_is_proposed_with_read_only_tools_approved_and_executed_step_by_step(
    api: FakeAnthropic, model_env: dict[str, str], notes_project: Path
) -> None:
    api.script(*two_steps())
    code, events, stderr = run_plan(model_env, notes_project, "--approve-plan")

    assert code == 0, stderr
    assert (notes_project / "out.txt").read_text() == "hello\nworld\n"
    steps = ["Write `out.txt` saying hello", "Add a second line to `out.txt`"]
    assert of_type(events, "plan_proposed")[0]["request_id"] == ""  # approved by the flag: nobody is asked
    assert of_type(events, "plan_approved")[0]["steps"] == steps
    checked = of_type(events, "plan_step_checked")
    assert [(c["index"], c["passed"], c["by"]) for c in checked] == [(0, True, "model"), (1, True, "model")]
    bodies = [r.body for r in api.requests]
    assert tool_names(bodies[0]) == tool_names(bodies[1]) == {"read", "glob", "grep", "think"}  # planning
    assert {"write", "edit", "bash"} <= tool_names(bodies[2])  # executing
    assert EXECUTE_PROMPT in json.dumps(bodies[2]["messages"][-1])
    assert "Step 2 of 2" in json.dumps(bodies[5]["messages"])
    assert events[-1]["success"] is True


def test_planning_is_read_only_whatever_the_permission_mode(
    api: FakeAnthropic, model_env: dict[str, str], notes_project: Path
) -> None:
    """A write asked for while planning is refused by the executor, even in bypass mode."""
    api.script(
        message(tool_use("w0", "write", {"path": "sneaky.txt", "content": "x"}), stop_reason="tool_use"),
        message(text("- [ ] Do nothing much")),
        message(text("Nothing to do.")),
        message(text("DONE")),
    )
    code, events, stderr = run_plan(model_env, notes_project, "--approve-plan")
    assert code == 0, stderr
    assert not (notes_project / "sneaky.txt").exists()
    (refused,) = [e for e in of_type(events, "tool_call_finished") if e["name"] == "write"]
    assert refused["is_error"] is True
    assert "not permitted while planning" in refused["output"]


def test_headless_without_approve_plan_stops_and_names_the_flag(
    api: FakeAnthropic, model_env: dict[str, str], notes_project: Path
) -> None:
    api.script(message(text(PLAN)))
    code, events, stderr = run_plan(model_env, notes_project)
    assert code == 1
    assert "--approve-plan" in of_type(events, "plan_cancelled")[0]["reason"]
    assert events[-1]["reason"] == "plan_cancelled"
    assert "--approve-plan" in stderr
    assert not (notes_project / "out.txt").exists()


def test_a_step_failing_its_verifier_is_retried_then_trips_the_breaker(
    api: FakeAnthropic, model_env: dict[str, str], notes_project: Path
) -> None:
    api.script(message(text("- [ ] Create `done.txt`")), *[message(text("Done, I think.")) for _ in range(3)])
    code, events, stderr = run_plan(model_env, notes_project, "--approve-plan", "--verify", "test -f done.txt")

    assert code == 1
    checked = of_type(events, "plan_step_checked")
    assert [(c["passed"], c["attempt"], c["by"]) for c in checked] == [
        (False, 1, "test -f done.txt"),
        (False, 2, "test -f done.txt"),
        (False, 3, "test -f done.txt"),
    ]
    assert events[-1]["reason"] == "plan_step_failed"
    assert "step 1 (Create `done.txt`) failed its check 3 times" in stderr
    assert "not done" in json.dumps(api.requests[2].body["messages"][-1]).lower()  # the retry says why


@pytest.mark.usefixtures("model_env")
def test_a_file_the_plan_names_deleted_underneath_revises_the_remaining_steps(
    api: FakeAnthropic, notes_project: Path
) -> None:
    api.script(
        message(text("- [ ] Read `notes.txt`\n- [ ] Summarize `notes.txt` into `summary.txt`")),
        message(text("Read it.")),
        message(text("DONE")),
        message(text("- [ ] Write `summary.txt` saying the notes are gone")),  # the revised plan
        message(tool_use("w1", "write", {"path": "summary.txt", "content": "gone\n"}), stop_reason="tool_use"),
        message(text("Written.")),
        message(text("DONE")),
    )
    seen: list[StepEvent] = []

    def person(event: StepEvent) -> None:
        seen.append(event)
        if isinstance(event, PlanStepChecked) and event.index == 0:
            (notes_project / "notes.txt").unlink()  # the person deletes it while the agent works

    strategy = PlanAndExecute(approve=True, config=LoopConfig(handler=person))
    with LocalEnvironment(workdir=notes_project) as env:
        result = strategy.run(create_provider(MODEL), DEFAULT_TOOLS, "summarize the notes", env)

    assert result.success, result.error
    (replanned,) = [e for e in seen if e.type == "replanned"]
    assert replanned.why == "notes.txt, which the plan names, is missing"  # type: ignore[attr-defined]
    assert replanned.steps == ["Read `notes.txt`", "Write `summary.txt` saying the notes are gone"]  # type: ignore[attr-defined]
    assert "The plan no longer holds" in json.dumps(api.requests[3].body["messages"][-1])
    assert tool_names(api.requests[3].body) == {"read", "glob", "grep", "think"}  # replanning is read-only too
    assert (notes_project / "summary.txt").read_text() == "gone\n"


@pytest.mark.parametrize("answer", ["approve", "edit", "cancel"])
@pytest.mark.usefixtures("model_env")
async def test_the_workbench_shows_the_plan_to_approve_edit_or_cancel(
    api: FakeAnthropic, notes_project: Path, answer: str
) -> None:
    api.script(
        message(text(PLAN)),
        message(tool_use("w1", "write", {"path": "out.txt", "content": "hello\n"}), stop_reason="tool_use"),
        message(text("Done.")),
        message(text("DONE")),
        *([] if answer == "edit" else [message(text("Second done.")), message(text("DONE"))]),
    )
    app = build_app(RunOptions(workdir=notes_project, model=MODEL, loop="plan", permission_mode="bypass"))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "write out.txt")
        await until(pilot, lambda: "Add a second line to out.txt" in screen_text(app), "the plan on screen")
        await answering(pilot, app, PlanPanel)  # the person moves to it
        if answer == "edit":
            await pilot.press("e")
            await until(pilot, lambda: bool(app.query("#plan-editor")), "the editor")
            editor = app.query_one("#plan-editor")
            editor.text = "- [ ] Write `out.txt` saying hello"  # type: ignore[attr-defined]
            await pilot.press("ctrl+s")
        else:
            await pilot.press(*(["c", "y"] if answer == "cancel" else [answer[0]]))  # c asks once
        await app.run_shown.wait()
        await pilot.pause()

    logged = [json.loads(line) for line in (app.session.store.folder / "events.jsonl").read_text().splitlines()]
    decided = [e for e in logged if e["type"] in {"plan_approved", "plan_edited", "plan_cancelled"}]
    assert [e["type"] for e in decided] == [
        {"approve": "plan_approved", "edit": "plan_edited"}.get(answer, "plan_cancelled")
    ]
    if answer == "edit":
        assert decided[0]["steps"] == ["Write `out.txt` saying hello"]
    bodies = [r.body for r in api.requests]
    if answer == "cancel":
        assert len(bodies) == 1
        assert not (notes_project / "out.txt").exists()
    elif answer == "edit":
        assert "Step 1 of 1" in json.dumps(bodies[1]["messages"])
        assert (notes_project / "out.txt").read_text() == "hello\n"
    else:
        assert "Step 2 of 2" in json.dumps(bodies[4]["messages"])
