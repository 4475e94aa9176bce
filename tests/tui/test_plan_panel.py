"""The plan as a panel beside (120 columns) or above (80) the conversation, which stays on screen: approved by
``a``, by ``/approve`` and from the palette; edited inline (escape keeps the edit, which is the plan answered);
sent back with what to change (the model revises it, the changes are marked, it is asked again); cancelled
(``c`` asks once; the run ends cancelled); its steps tick off live and it folds to one line when done."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from chimera.core.events import PlanEdited, StepEvent
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from tests.cli_runner import run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text
from tests.tui_helpers import answering, in_palette, screen_text, send, until

PLAN = message(text("- [ ] say `hello` to **everyone**\n- [ ] say bye"))
CARRIED_OUT = [message(text("Hello.")), message(text("DONE")), message(text("Bye.")), message(text("DONE"))]


async def proposed(pilot: Pilot[int], app: ChimeraApp) -> PlanPanel:
    """``/plan greet`` sent; once the plan is on screen the person moves to it (``ctrl+y``)."""
    await send(pilot, "/plan greet")
    panel = app.query_one(PlanPanel)
    await answering(pilot, app, PlanPanel)
    await until(pilot, lambda: "say bye" in screen_text(app), "the plan's steps")
    return panel


async def carried_out(pilot: Pilot[int], app: ChimeraApp) -> None:
    await app.run_shown.wait()
    await until(pilot, lambda: app.state.status.state == "done", "the plan carried out")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
@pytest.mark.usefixtures("model_env")
async def test_approve_by_key_with_the_conversation_on_screen(
    api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """The plan shows beside/above the conversation (the task still on screen, inline Markdown drawn), its keys on
    screen; ``a`` approves it, the steps tick off, and the panel folds to one line when it is done."""
    api.script(PLAN, *CARRIED_OUT)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=size) as pilot:
        await proposed(pilot, app)
        shown = screen_text(app)
        assert "› greet" in shown or "greet" in shown  # the conversation behind stays
        assert "say hello to everyone" in shown  # backticks and bold drawn, not shown as marks
        assert "a approve" in shown
        assert "c cancel" in shown
        await pilot.press("a")
        await carried_out(pilot, app)
        await until(pilot, lambda: "The plan (2 steps) done" in screen_text(app), "the plan folded")
        assert "say bye" not in screen_text(app).split("The plan (2 steps) done")[1][:200]
        assert app.state.plan.checks == [True, True]
        await until(pilot, lambda: "✓ done in" in screen_text(app), "the run's end in view as the panel folds")
    assert len(api.requests) == 5


@pytest.mark.parametrize("ending", ["done", "cancelled"])
@pytest.mark.usefixtures("model_env")
async def test_a_plan_over_gives_the_conversation_its_width_back(
    api: FakeAnthropic, project: Path, ending: str
) -> None:
    """At 120 columns the plan is a column beside the conversation while it is asked and carried out; once it is
    over (done or cancelled) its one line sits above the conversation, which has the whole width again."""
    api.script(PLAN, *CARRIED_OUT)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        panel = await proposed(pilot, app)
        conversation = app.query_one("#conversation")
        assert conversation.size.width < 100  # the plan's column beside it
        await pilot.press(*(("c", "y") if ending == "cancelled" else ("a",)))
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.plan.phase in {"over", "cancelled"}, "the plan over")
        await until(pilot, lambda: conversation.size.width == 120, "the conversation's whole width")
        assert panel.outer_size.height == 1
        assert panel.region.y < conversation.region.y  # above it, as one line
        first = screen_text(app).splitlines()[0]
        assert "The plan (2 steps) done" in first or "The plan was cancelled" in first


@pytest.mark.usefixtures("model_env")
async def test_approve_by_slash_and_by_palette(api: FakeAnthropic, project: Path) -> None:
    """/approve typed in the input, and Approve the plan chosen in the palette, each approve the plan."""
    api.script(PLAN, *CARRIED_OUT, PLAN, *CARRIED_OUT)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await proposed(pilot, app)
        await send(pilot, "/approve")
        await carried_out(pilot, app)
        app.run_shown.clear()
        await proposed(pilot, app)
        await in_palette(pilot, app, "approve", "Approve the plan")
        await carried_out(pilot, app)
    assert len(api.requests) == 10


@pytest.mark.usefixtures("model_env")
async def test_escape_leaves_the_editor_and_keeps_the_edit(api: FakeAnthropic, project: Path) -> None:
    """``e`` edits inline; escape leaves the editor keeping the edit (the plan is not cancelled); ``a`` then
    answers with the edited plan, which the model is told to follow."""
    api.script(PLAN, message(text("Hi.")), message(text("DONE")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    edited: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: edited.append(e) if isinstance(e, PlanEdited) else None)
    async with app.run_test(size=(80, 24)) as pilot:
        panel = await proposed(pilot, app)
        await pilot.press("e")
        await until(pilot, lambda: isinstance(app.focused, TextArea), "the editor")
        assert "ctrl+s uses this plan" in screen_text(app)
        app.query_one("#plan-editor", TextArea).text = "- [ ] say hi"
        await pilot.press("escape")
        await until(pilot, lambda: app.focused is panel, "back on the plan")
        assert app.state.questions.plan is not None  # still waiting: escape never cancels
        assert app.state.status.state == "running"
        assert "a approves your edit" in screen_text(app)
        assert "say hi" in screen_text(app)
        await pilot.press("a")
        await carried_out(pilot, app)
    assert [e.steps for e in edited] == [["say hi"]]  # type: ignore[attr-defined]
    assert "say hi" in json.dumps(api.requests[1].messages)


@pytest.mark.usefixtures("model_env")
async def test_keep_planning_revises_the_plan_and_asks_again(api: FakeAnthropic, project: Path) -> None:
    """``k``, what to change, enter: the model gets it, the revised plan marks what changed and waits for a
    fresh approval (nothing runs until then)."""
    api.script(PLAN, message(text("- [ ] say `hello` to **everyone**\n- [ ] wave\n- [ ] say bye")), *CARRIED_OUT)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        panel = await proposed(pilot, app)
        await pilot.press("k")
        await until(pilot, lambda: isinstance(app.focused, Input) and app.focused.id == "plan-feedback", "asked")
        await pilot.press(*"also wave", "enter")
        await until(pilot, lambda: "+ ☐ 2. wave" in screen_text(app), "the revision")
        assert app.focused is not panel  # answered: the focus is back in the input, the revision waits for it
        await answering(pilot, app, PlanPanel)
        assert "revised" in screen_text(app)
        assert "also wave" in json.dumps(api.requests[1].messages)
        assert len(api.requests) == 2  # nothing carried out before the fresh answer
        await pilot.press("a")
        await app.run_shown.wait()
    assert len(api.requests) >= 3


@pytest.mark.usefixtures("model_env")
async def test_cancel_asks_once_and_ends_cancelled(
    api: FakeAnthropic, project: Path, model_env: dict[str, str]
) -> None:
    """``c`` asks "Cancel the plan? y/n"; n keeps the plan; c then y cancels: the status says cancelled, never
    failed, and ``chimera sessions`` lists the session as cancelled."""
    api.script(PLAN)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await proposed(pilot, app)
        await pilot.press("c")
        await until(pilot, lambda: "Cancel the plan? y/n" in screen_text(app), "asked once")
        await pilot.press("n")
        await until(pilot, lambda: "Cancel the plan? y/n" not in screen_text(app), "kept")
        assert app.state.questions.plan is not None
        await pilot.press("c", "y")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "cancelled", "cancelled")
        assert "cancelled" in screen_text(app)
        assert "failed" not in screen_text(app)
        assert app.query_one(PromptInput).value == ""
    listed = run_here("sessions", env=model_env)
    assert "cancelled" in listed.stdout
    assert "failed" not in listed.stdout
    assert len(api.requests) == 1


@pytest.mark.usefixtures("model_env")
async def test_a_cancelled_plan_is_said_once(api: FakeAnthropic, project: Path) -> None:
    """Cancelled, the plan is said to be cancelled once in the conversation, with why (it was said twice: "plan
    cancelled: cancelled by the person", then "the plan was cancelled: the person cancelled the plan")."""
    api.script(PLAN)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await proposed(pilot, app)
        await pilot.press("c", "y")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "cancelled", "cancelled")
        said = [e.text for e in app.transcript.entries if "cancel" in e.text]
        assert said == ["⊘ the plan was cancelled: the person cancelled the plan"]


@pytest.mark.usefixtures("model_env")
async def test_the_steps_tick_off_live_and_a_failed_check_says_why(api: FakeAnthropic, project: Path) -> None:
    """While the plan is carried out the panel shows each step ticked as its check passes, the step being worked
    on marked, and a failed check with what it said."""
    release, reached = threading.Event(), threading.Event()
    api.script(
        PLAN,
        message(text("Hello.")),
        message(text("DONE")),
        message(text("Bye.")),
        message(text("NOT DONE: nobody heard it")),
        paused(message(text("Bye again.")), release, reached),
        message(text("DONE")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await proposed(pilot, app)
        await pilot.press("a")
        await until(pilot, reached.is_set, "the retry of step 2 streaming")
        await until(  # the retry's request can arrive before the screen drew the failed check
            pilot,
            lambda: "▶ 2. say bye" in screen_text(app) and "✗ NOT DONE" in screen_text(app),
            "step 2 failed, worked on again",
        )
        shown = screen_text(app)
        assert "✗ NOT DONE: nobody heard it" in shown  # why its check failed, under it
        assert "☑ 1. say hello to everyone" in shown
        assert "nobody heard it" in shown
        assert "1 of 2 done" in shown
        release.set()
        await carried_out(pilot, app)
    assert app.state.plan.checks == [True, True]


@pytest.mark.usefixtures("model_env")
async def test_a_replan_shows_why_and_what_changed(api: FakeAnthropic, project: Path) -> None:
    """A file the plan names is deleted while step 1 works: the panel says why the plan changed and marks the
    changed step, which is the one worked on next."""
    (project / "notes.txt").write_text("the notes\n")
    working, worked = threading.Event(), threading.Event()
    release, reached = threading.Event(), threading.Event()
    api.script(
        message(text("- [ ] Read `notes.txt`\n- [ ] Summarize `notes.txt` into `summary.txt`")),
        paused(message(text("Read it.")), working, worked),  # step 1 at work: the person deletes the file
        message(text("DONE")),
        message(text("- [ ] Write `summary.txt` saying the notes are gone")),  # the revised plan
        paused(message(text("Writing.")), release, reached),
        message(text("DONE")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan summarize the notes")
        await answering(pilot, app, PlanPanel)
        await pilot.press("a")
        await until(pilot, worked.is_set, "step 1 at work")
        (project / "notes.txt").unlink()
        working.set()
        await until(pilot, reached.is_set, "the revised step worked on")
        await until(pilot, lambda: "Re-planned" in screen_text(app), "the re-plan on screen")
        shown = screen_text(app)
        assert "Re-planned: notes.txt, which the plan names, is" in shown  # (wrapped in the panel)
        assert "~ ▶ 2. Write summary.txt saying the notes are" in shown  # changed, and worked on now
        assert "☑ 1. Read notes.txt" in shown
        assert app.state.plan.changes == ["", "changed"]
        release.set()
        await carried_out(pilot, app)


@pytest.mark.usefixtures("model_env")
async def test_the_next_task_puts_the_finished_plan_away(api: FakeAnthropic, project: Path) -> None:
    """The plan's folded line stays after its run, and goes when the next task starts (it was that task's plan)."""
    api.script(PLAN, *CARRIED_OUT, message(text("You are welcome.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await proposed(pilot, app)
        await pilot.press("a")
        await carried_out(pilot, app)
        await until(pilot, lambda: "The plan (2 steps) done" in screen_text(app), "the plan folded")
        await send(pilot, "thanks")
        await until(pilot, lambda: "You are welcome." in screen_text(app), "the next answer")
        assert "The plan (2 steps) done" not in screen_text(app)
        assert not app.query_one(PlanPanel).has_class("-shown")
