"""``/loop``, ``/model`` and ``/mode`` in the workbench change what the next run uses, as the loopback server
and the run's events see it; a name that does not exist changes nothing and says the choices in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.status_line import StatusLine
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import answering, entries, in_palette, screen_text, send, toasts, until


@pytest.mark.usefixtures("model_env")
async def test_model_names_the_model_of_the_next_request(api: FakeAnthropic, project: Path) -> None:
    """/model claude-haiku-4-5: the status line says it, and the next request asks that model."""
    api.script(message(text("One.")), message(text("Two.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "first")
        await app.run_shown.wait()
        await until(pilot, lambda: not app.running, "the run to end")
        app.run_shown.clear()
        await send(pilot, "/model claude-haiku-4-5")
        await until(pilot, lambda: "claude-haiku-4-5" in screen_text(app), "the model on the status line")
        await send(pilot, "second")
        await app.run_shown.wait()
    assert [r.body["model"] for r in api.requests] == [MODEL, "claude-haiku-4-5"]


@pytest.mark.usefixtures("model_env")
async def test_a_model_chimera_does_not_know_is_used_and_said_so(api: FakeAnthropic, project: Path) -> None:
    """/model claude-x (a typo, or a local server's model) is used, and one line says Chimera does not know it and
    how to go back; a known one is not warned about; /model alone asks for a name without offering a closed list."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/model")
        await until(pilot, lambda: "/model needs NAME" in toasts(app), "the refusal")
        assert "/model needs NAME: any model your server serves, such as claude-sonnet-4-6" in toasts(app)
        assert "one of" not in toasts(app)
        app.clear_notifications()
        app.query_one("#prompt").value = ""  # type: ignore[attr-defined]
        await send(pilot, "/model claude-x")
        await until(pilot, lambda: app.session.model == "claude-x", "the model taken")
        await until(pilot, lambda: "claude-x is not a model Chimera knows" in toasts(app), "the warning")
        assert "the next runs use it anyway; /model claude-sonnet-4-6 goes back." in toasts(app)
        app.clear_notifications()
        await send(pilot, "/model claude-haiku-4-5")
        await until(pilot, lambda: "The next runs use the model claude-haiku-4-5." in toasts(app), "the change")
        assert "not a model Chimera knows" not in toasts(app)
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_loop_plan_makes_the_next_task_plan_first(api: FakeAnthropic, project: Path) -> None:
    """/loop plan: the next task is planned and the plan asked about; the status line shows the strategy."""
    api.script(message(text("- [ ] say hello")), message(text("Hello.")), message(text("DONE")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/loop plan")
        await until(pilot, lambda: " · plan · turn 0" in str(app.query_one(StatusLine).render()), "the strategy shown")
        await send(pilot, "greet")
        await answering(pilot, app, PlanPanel)
        await pilot.press("a")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "done", "the plan carried out")
        assert app.state.plan.checks == [True]
    planning_tools = {tool["name"] for tool in api.requests[0].body["tools"]}
    assert planning_tools <= {"read", "glob", "grep", "think"}  # the planning pass: read-only
    assert len(api.requests) == 3  # the plan, its one step, the step's check


@pytest.mark.usefixtures("model_env")
async def test_mode_plan_refuses_the_next_runs_writes(api: FakeAnthropic, project: Path) -> None:
    """/mode plan (from bypass): the next run's write is refused, the file never made; the status line says plan."""
    api.script(
        message(tool_use("w1", "write", {"path": "a.txt", "content": "x"}), stop_reason="tool_use"),
        message(text("Could not.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/mode plan")
        await until(pilot, lambda: app.state.status.mode == "plan", "the mode to change")
        await send(pilot, "write a")
        await app.run_shown.wait()
        await until(pilot, lambda: bool(entries(app, "tool")) and entries(app, "tool")[0].ended == "refused", "refused")
    assert not (project / "a.txt").exists()


@pytest.mark.parametrize(
    ("typed", "words"),
    [
        ("/loop treeish", "/loop: the strategy 'treeish' is unknown: use one of react, plan, reflexion, tot"),
        ("/mode yolo", "/mode: the permission mode 'yolo' is unknown: use one of ask, accept-edits, plan, bypass"),
        ("/model two words", "/model: 'two words' is not a model name"),
        ("/loop", "/loop needs NAME: one of react, plan, reflexion, tot."),
        ("/theme plaid", "/theme plaid is not a theme here: one of"),
        ("/quit now", "/quit takes nothing after it: send /quit alone."),
    ],
)
@pytest.mark.usefixtures("model_env")
async def test_a_bad_choice_changes_nothing_and_says_the_choices(
    api: FakeAnthropic, project: Path, typed: str, words: str
) -> None:
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        theme = app.theme
        await send(pilot, typed)
        await until(pilot, lambda: words in toasts(app), repr(words))
        assert (app.session.loop_name, app.session.model, app.session.policy.mode) == ("react", MODEL, "ask")
        assert app.theme == theme
        assert app.query_one("#prompt").value == typed  # type: ignore[attr-defined]
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_theme_switches_the_colours(api: FakeAnthropic, project: Path) -> None:
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/theme chimera-light")
        await until(pilot, lambda: app.theme == "chimera-light", "the light theme")


@pytest.mark.usefixtures("model_env")
async def test_the_palette_changes_the_theme(api: FakeAnthropic, project: Path) -> None:
    """ctrl+p, "change theme": one hit per theme, as the README says (ctrl+p → Change theme); taking one puts it on."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await in_palette(pilot, app, "change theme chimera-light", "Change theme: chimera-light")
        await until(pilot, lambda: app.theme == "chimera-light", "the light theme")


async def test_the_demo_keeps_its_strategy_and_says_how_to_choose(isolated_env: Path) -> None:
    """In the demo /loop answers that it does not work there and how to connect a model."""
    app = build_app(RunOptions(), demo_pace=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_shown.wait()
        await send(pilot, "/loop plan")
        await until(pilot, lambda: "/loop does not work in the demo" in toasts(app), "the answer")
        assert "ANTHROPIC_API_KEY" in toasts(app)
        assert app.session.loop_name == "react"
