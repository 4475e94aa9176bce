"""``/plan TASK`` and the plan's answers by command: the task is planned first (that task only), the plan's
screen can be put aside with ``/`` to type ``/approve``, ``/edit`` or ``/cancel``, and each answers the plan
through the session; with no plan waiting they say so in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import TextArea

from chimera.core.events import PlanEdited, StepEvent
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import answering, said, screen_text, send, toasts, until

PLAN = message(text("- [ ] say hello\n- [ ] say bye"))


async def put_aside(pilot: Pilot[int], app: ChimeraApp) -> None:
    """The plan asks; ``/`` on it puts a slash in the input, to type a command."""
    await answering(pilot, app, PlanPanel)
    await pilot.press("slash")
    await until(
        pilot,
        lambda: app.query_one(PromptInput).value == "/" and isinstance(app.focused, PromptInput),
        "the slash in the input, and the focus",
    )
    assert app.state.questions.plan is not None  # still waiting for its answer


@pytest.mark.usefixtures("model_env")
async def test_plan_a_task_then_approve_it_by_command(api: FakeAnthropic, project: Path) -> None:
    """/plan greet plans (read-only tools), the plan put aside shows in the conversation, /approve carries it
    out step by step; the next task runs with the strategy from before."""
    api.script(
        PLAN,
        message(text("Hello.")),
        message(text("DONE")),
        message(text("Bye.")),
        message(text("DONE")),
        message(text("Plain answer.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan greet")
        await put_aside(pilot, app)
        assert "say hello" in screen_text(app)  # the plan, in the conversation behind
        await pilot.press(*"approve", "enter")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "done", "the plan carried out")
        assert app.state.plan.checks == [True, True]
        assert (app.state.status.loop, app.session.loop_name) == ("react", "react")  # the plan was for that task
        app.run_shown.clear()
        await send(pilot, "and now?")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "done", "the next task answered")
        assert app.state.status.loop == "react"
        assert said(app) == ["greet", "and now?"]
    assert {t["name"] for t in api.requests[0].body["tools"]} <= {"read", "glob", "grep", "think"}
    assert len(api.requests) == 6


@pytest.mark.usefixtures("model_env")
async def test_edit_by_command_opens_the_editor_and_the_edit_is_the_plan(api: FakeAnthropic, project: Path) -> None:
    api.script(PLAN, message(text("Hi.")), message(text("DONE")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    edited: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: edited.append(e) if isinstance(e, PlanEdited) else None)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan greet")
        await put_aside(pilot, app)
        await pilot.press(*"edit", "enter")
        await until(pilot, lambda: isinstance(app.focused, TextArea), "editor")
        app.query_one("#plan-editor", TextArea).text = "- [ ] say hi"
        await pilot.press("ctrl+s")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "done", "the edited plan carried out")
        assert app.state.plan.steps == ["say hi"]
    assert [e.steps for e in edited] == [["say hi"]]  # type: ignore[attr-defined]


@pytest.mark.usefixtures("model_env")
async def test_cancel_by_command_ends_the_run_cancelled(api: FakeAnthropic, project: Path) -> None:
    api.script(PLAN)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan greet")
        await put_aside(pilot, app)
        await pilot.press(*"cancel", "enter")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "cancelled", "cancelled")
        assert "failed" not in screen_text(app)
    assert len(api.requests) == 1


@pytest.mark.parametrize("typed", ["/approve", "/edit", "/cancel"])
@pytest.mark.usefixtures("model_env")
async def test_a_plan_answer_with_no_plan_waiting_says_so(api: FakeAnthropic, project: Path, typed: str) -> None:
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, typed)
        await until(pilot, lambda: f"{typed} has no plan to answer" in toasts(app), "the answer")
        assert "/plan TASK plans a task first" in toasts(app)
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_plan_needs_its_task(api: FakeAnthropic, project: Path) -> None:
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan")
        await until(pilot, lambda: "/plan needs TASK: type /plan TASK." in toasts(app), "the answer")
    assert api.requests == []
