"""Snapshots (pytest-textual-snapshot) of the plan panel and the questions in place, at 80×24 and 120×40: the
plan proposed, carried out with a failed check, folded when done; a permission question with a diff; two
questions waiting. At 80×24 every key the person needs is on screen. Accept a deliberate change with
``pytest tests/tui/test_panel_snapshots.py -n 0 --snapshot-update`` after looking at the new pictures."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.events import PermissionRequested
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.plan_panel import PlanPanel
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use
from tests.tui_helpers import answering, asked, pictured, screen_text, send, still, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]
PLAN = message(text("- [ ] Read `stats.py`\n- [ ] Fix **median** for even lists\n- [ ] Run the tests"))


def sized(size: tuple[int, int]) -> str:
    return f"{size[0]}x{size[1]}"


@pytest.mark.parametrize("size", SIZES, ids=sized)
@pytest.mark.usefixtures("model_env")
def test_the_plan_proposed(snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]) -> None:
    """The plan beside (120) or above (80) the conversation, its keys on screen."""
    api.script(PLAN)
    app = still(build_app(RunOptions(workdir=project, model=MODEL, loop="plan", permission_mode="bypass")))

    async def proposed(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "fix the median")
        await answering(pilot, app, PlanPanel)
        await until(pilot, lambda: "Run the tests" in screen_text(app), "plan")
        shown = screen_text(app)
        assert all(key in shown for key in ("a approve", "e edit", "k keep planning", "c cancel"))
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=proposed)


@pytest.mark.parametrize("size", SIZES, ids=sized)
@pytest.mark.usefixtures("model_env")
def test_the_plan_with_a_failed_check(
    snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """Step 1 ticked, step 2's check failed with what it said, its retry streaming."""
    release, reached = threading.Event(), threading.Event()
    api.script(
        PLAN,
        message(text("Read it.")),
        message(text("DONE")),
        message(text("Fixed.")),
        message(text("NOT DONE: median([1, 2]) is still 1")),
        paused(message(text("Fixing again.")), release, reached),
    )
    app = still(build_app(RunOptions(workdir=project, model=MODEL, loop="plan", permission_mode="bypass")))

    async def failed(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "fix the median")
        await answering(pilot, app, PlanPanel)
        await pilot.press("a")
        await until(pilot, lambda: reached.is_set() and "still 1" in screen_text(app), "the failed check")
        await until(pilot, lambda: "Fixin" in screen_text(app), "the retry's first words")
        await pictured(pilot, app)

    try:
        assert snap_compare(app, terminal_size=size, run_before=failed)
    finally:
        release.set()


@pytest.mark.parametrize("size", SIZES, ids=sized)
@pytest.mark.usefixtures("model_env")
def test_the_plan_folded(snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]) -> None:
    """Done: the plan is one line, the conversation has the room."""
    api.script(PLAN, *[message(text(t)) for t in ("Read it.", "DONE", "Fixed.", "DONE", "Passed.", "DONE")])
    app = still(build_app(RunOptions(workdir=project, model=MODEL, loop="plan", permission_mode="bypass")))

    async def done(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "fix the median")
        await answering(pilot, app, PlanPanel)
        await pilot.press("a")
        await until(pilot, lambda: "The plan (3 steps) done" in screen_text(app), "the plan folded")
        await app.run_shown.wait()
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=done)


@pytest.mark.parametrize("size", SIZES, ids=sized)
@pytest.mark.usefixtures("model_env")
def test_a_question_with_a_diff(snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]) -> None:
    """An edit asked about: its diff, the rule "always" adds and the keys, above the input."""
    (project / "stats.py").write_text("def median(xs):\n    return xs[len(xs) // 2]\n")
    change = {
        "path": "stats.py",
        "old": "    return xs[len(xs) // 2]\n",
        "new": "    return sorted(xs)[len(xs) // 2]\n",
    }
    api.script(message(tool_use("e1", "edit", change), stop_reason="tool_use"))
    app = still(build_app(RunOptions(workdir=project, model=MODEL)))

    async def questioned(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "fix the median")
        await asked(pilot, app)
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=questioned)


@pytest.mark.parametrize("size", SIZES, ids=sized)
@pytest.mark.usefixtures("model_env")
def test_two_questions_waiting(snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]) -> None:
    """The oldest of two asked, "1 of 2"."""
    api.script(message(tool_use("b1", "bash", {"command": "make clean"}), stop_reason="tool_use"))
    app = still(build_app(RunOptions(workdir=project, model=MODEL)))

    async def two(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "clean and test")
        await asked(pilot, app)
        app.session.bus.publish(
            PermissionRequested(request_id="other:1", call_id="b2", name="bash", args={"command": "make test"})
        )
        await until(pilot, lambda: "(1 of 2)" in screen_text(app), "the queue")
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=two)


@pytest.mark.parametrize("size", SIZES, ids=sized)
@pytest.mark.usefixtures("model_env")
def test_the_rule_an_always_keeps_being_edited(
    snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """`e` on a question: the rule in one line to edit, what a rule is and the keys, the call still shown."""
    api.script(message(tool_use("b1", "bash", {"command": "make clean"}), stop_reason="tool_use"))
    app = still(build_app(RunOptions(workdir=project, model=MODEL)))

    async def editing(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "clean the build")
        await asked(pilot, app)
        await pilot.press("e")
        await until(pilot, lambda: "enter allows and keeps this rule" in screen_text(app), "the rule to edit")
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=editing)
