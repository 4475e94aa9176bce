"""The rule an "always" keeps, edited before it is kept (``e``), refused in a line when it is not a rule for the
call, and the kept answers listed and taken back by ``/mode``."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use
from tests.tui_helpers import asked, entries, screen_text, send, toasts, until


def bash(call_id: str, command: str) -> Reply:
    return message(tool_use(call_id, "bash", {"command": command}), stop_reason="tool_use")


@pytest.mark.usefixtures("model_env")
async def test_an_edited_rule_is_kept_listed_and_taken_back(api: FakeAnthropic, project: Path) -> None:
    """e opens bash(touch made-1) to edit; kept as bash(touch made-*), the next match runs unasked; /mode lists
    it; /mode forget 1 takes it back, and the same kind of command is asked about again."""
    api.script(bash("b1", "touch made-1"), bash("b2", "touch made-2"), message(text("Both made.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "make two files")
        await asked(pilot, app)
        await pilot.press("e")
        line = app.query_one("#question-rule", Input)
        await until(pilot, lambda: app.focused is line, "the rule to edit")
        assert line.value == "bash(touch made-1)"
        assert "enter allows and keeps this rule" in screen_text(app)
        line.value = "bash(touch made-*)"
        await pilot.press("enter")
        await app.run_shown.wait()
        assert (project / "made-2").exists()  # ran unasked under the rule
        await send(pilot, "/mode")
        await until(pilot, lambda: "1. bash(touch made-*)" in screen_text(app), "the kept answer listed")
        await send(pilot, "/mode forget 1")
        await until(pilot, lambda: "Asked again from now on: bash(touch made-*)" in screen_text(app), "forgotten")
        api.script(bash("b3", "touch made-3"), message(text("Made.")))
        await send(pilot, "one more")
        await asked(pilot, app)  # asked again
        await pilot.press("n")
        await app.run_shown.wait()
    assert not (project / "made-3").exists()
    assert len(api.requests) == 5


@pytest.mark.usefixtures("model_env")
async def test_a_rule_for_another_tool_is_refused_in_a_line_and_the_question_stays(
    api: FakeAnthropic, project: Path
) -> None:
    """A rule naming another tool: one line says why, the question and the text written stay; escape goes back
    to the question, and y still answers it."""
    api.script(bash("b1", "touch made"), message(text("Made.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "make a file")
        await asked(pilot, app)
        await pilot.press("e")
        line = app.query_one("#question-rule", Input)
        await until(pilot, lambda: app.focused is line, "the rule to edit")
        line.value = "read"
        await pilot.press("enter")
        await until(pilot, lambda: "is not about bash" in toasts(app), "the refusal")
        assert app.query_one("#question-rule", Input).value == "read"
        assert not (project / "made").exists()
        await pilot.press("escape")
        await until(pilot, lambda: not app.query("#question-rule"), "back to the question")
        assert app.running  # escape left the line, not the run
        await pilot.press("y")
        await app.run_shown.wait()
    assert (project / "made").exists()
    assert app.session.kept == []


@pytest.mark.usefixtures("model_env")
async def test_mode_alone_says_when_nothing_is_kept_and_forget_names_the_choices(
    api: FakeAnthropic, project: Path
) -> None:
    """/mode with nothing kept says so; /mode forget 3 says there is none and how; no request is sent."""
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "/mode")
        await until(pilot, lambda: 'No "always" answered this session.' in screen_text(app), "nothing kept")
        assert "Permission mode ask." in screen_text(app)
        await send(pilot, "/mode forget 3")
        await until(pilot, lambda: "no call has been allowed always yet" in toasts(app), "the refusal")
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_mode_lists_an_always_as_allow_takes_it(api: FakeAnthropic, project: Path) -> None:
    """a a on `touch made`: /mode lists bash(touch made), the rule --allow would take, and forget names it so."""
    api.script(bash("b1", "touch made"), message(text("Made.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "make a file")
        await asked(pilot, app)
        await pilot.press("a", "a")
        await app.run_shown.wait()
        await send(pilot, "/mode")
        await until(pilot, lambda: "1. bash(touch made)" in screen_text(app), "the kept answer listed")
        await send(pilot, "/mode forget 1")
        await until(pilot, lambda: "Asked again from now on: bash(touch made)." in screen_text(app), "forgotten")
    assert (project / "made").exists()


@pytest.mark.usefixtures("model_env")
async def test_a_kept_answer_keeps_its_number_after_another_is_taken_back(api: FakeAnthropic, project: Path) -> None:
    """Three "always" answers listed 1 to 3; /mode forget 1 names what it took back and lists the rest as they are
    now, each under the number it had; /mode forget 2 then takes back the second answer (not the third, which
    the numbers shifting made 2), and the number taken back is refused in a line naming those kept."""
    api.script(bash("b1", "touch one"), bash("b2", "touch two"), bash("b3", "touch three"), message(text("Made.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "make three files")
        for name in ("one", "two", "three"):
            await asked(pilot, app)
            await pilot.press("a", "a")
            await until(pilot, (project / name).exists, f"{name} made")
        await app.run_shown.wait()
        await send(pilot, "/mode forget 1")
        await until(pilot, lambda: "Asked again from now on: bash(touch one)" in screen_text(app), "one taken back")
        assert said_last(app).splitlines()[1:] == [
            'Still allowed unasked by an "always" (/mode forget N takes one back):',
            "  2. bash(touch two)",
            "  3. bash(touch three)",
        ]
        await send(pilot, "/mode forget 2")
        await until(pilot, lambda: "Asked again from now on: bash(touch two)" in screen_text(app), "two taken back")
        assert app.session.kept == ["bash(touch three)"]
        await send(pilot, "/mode")
        await until(pilot, lambda: said_last(app).endswith("  3. bash(touch three)"), "three listed as 3")
        await send(pilot, "/mode forget 1")
        await until(pilot, lambda: "there is no kept answer 1: it was taken back; give 3" in toasts(app), "refused")
        assert app.session.kept == ["bash(touch three)"]


def said_last(app: object) -> str:
    """The last notice in the conversation."""
    return str(entries(app, "notice")[-1].text)
