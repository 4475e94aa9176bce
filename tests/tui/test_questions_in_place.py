"""Permission questions in place, above the input, the conversation on screen behind: answered y / a a / n / d
(d's reason reaches the model), two waiting in a queue oldest first ("1 of 2"), never answered by keys typed
for the input, and escape interrupting the run with a question open."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.events import PermissionDecided, PermissionRequested, StepEvent
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use
from tests.tui_helpers import asked, screen_text, send, until

EDIT = {"path": "a.txt", "old": "one\n", "new": "two\n"}


def decided(app: ChimeraApp) -> list[StepEvent]:
    seen: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: seen.append(e) if isinstance(e, PermissionDecided) else None)
    return seen


@pytest.mark.parametrize(
    ("keys", "changed", "told"),
    [
        (["y"], True, ""),
        (["a", "a"], True, ""),
        (["n"], False, "declined"),
        (["d", *"keep it as one", "enter"], False, "keep it as one"),
    ],
    ids=["y", "a", "n", "d"],
)
@pytest.mark.usefixtures("model_env")
async def test_a_question_answered_by_its_keys(
    api: FakeAnthropic, project: Path, keys: list[str], changed: bool, told: str
) -> None:
    """The edit's diff and the rule "always" adds are shown above the input with the conversation behind; y and a
    let it run, n refuses it, d refuses it with a reason the model reads in the tool_result."""
    (project / "a.txt").write_text("one\n")
    api.script(message(tool_use("e1", "edit", EDIT), stop_reason="tool_use"), message(text("Noted.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "change a")
        shown = await asked(pilot, app)
        assert "change a" in shown  # the conversation stays on screen
        assert "-one" in shown
        assert "+two" in shown
        assert "a adds the rule edit, write" in shown
        await pilot.press(*keys)
        await app.run_shown.wait()
    assert ((project / "a.txt").read_text() == "two\n") is changed
    result = json.dumps(api.requests[1].messages[-1])
    assert "tool_result" in result
    assert told in result


@pytest.mark.usefixtures("model_env")
async def test_an_edit_asked_about_shows_its_change_at_the_files_real_lines(api: FakeAnthropic, project: Path) -> None:
    """An edit of line 5 of a 20-line file: the question shows the hunk at line 2, with the three lines before and
    after the change, as the file is now."""
    (project / "twenty.txt").write_text("".join(f"line {n}\n" for n in range(1, 21)))
    change = {"path": "twenty.txt", "old": "line 5\n", "new": "line five\n"}
    api.script(message(tool_use("e1", "edit", change), stop_reason="tool_use"), message(text("Noted.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 30)) as pilot:
        await send(pilot, "change line 5")
        shown = await asked(pilot, app)
        panel = [line.partition("█ ")[2].rstrip() for line in shown.splitlines() if "█ " in line]
        at = panel.index("@@ -2,7 +2,7 @@")
        hunk = [" line 2", " line 3", " line 4", "-line 5", "+line five", " line 6", " line 7", " line 8"]
        assert panel[at - 2 : at + 9] == ["--- a/twenty.txt", "+++ b/twenty.txt", "@@ -2,7 +2,7 @@", *hunk]
        await pilot.press("n")
        await app.run_shown.wait()


@pytest.mark.usefixtures("model_env")
async def test_two_questions_wait_in_a_queue_oldest_first(api: FakeAnthropic, project: Path) -> None:
    """Two questions open: the oldest is asked as "1 of 2"; once it is answered the other is asked alone.

    The core asks one call at a time today, so the second comes on the bus as another asker (a script on the
    control channel, a parallel call) would publish it."""
    api.script(message(tool_use("b1", "bash", {"command": "echo first > one"}), stop_reason="tool_use"))
    release, reached = threading.Event(), threading.Event()
    api.script(paused(message(text("Done.")), release, reached))  # the run goes on after the first answer
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "write both")
        await asked(pilot, app)
        second = {"command": "echo second > two"}
        app.session.bus.publish(PermissionRequested(request_id="other:1", call_id="b2", name="bash", args=second))
        await until(pilot, lambda: "(1 of 2)" in screen_text(app), "the queue shown")
        assert "echo first" in screen_text(app)
        await pilot.press("y")
        await until(pilot, lambda: "echo second" in screen_text(app) and "1 of 2" not in screen_text(app), "the next")
        release.set()
        await app.run_shown.wait()  # the run's end closes what it left open
        await until(pilot, lambda: not app.query_one(QuestionPanel).has_class("-shown"), "no question left")
    assert (project / "one").exists()


async def typed_as_asked(pilot: Pilot[int], app: ChimeraApp, words: str) -> None:
    """Type ``words`` in the input one key at a time while the question arrives."""
    for key in words:
        await pilot.press("space" if key == " " else key)


@pytest.mark.usefixtures("model_env")
async def test_keys_typed_for_the_input_never_answer_a_question(api: FakeAnthropic, project: Path) -> None:
    """ "a a" typed as steering just as a question appears stays in the input: the question waits unfocused and
    unanswered (ctrl+y is shown), and the server never gets an answer; escape on the question goes back to the
    input, and escape there interrupts the run."""
    api.script(message(tool_use("b1", "bash", {"command": "rm -rf build"}), stop_reason="tool_use"))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    answers = decided(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "clean up")
        await until(pilot, lambda: len(app.state.questions) == 1, "the question to arrive")
        await typed_as_asked(pilot, app, "a a")
        prompt = app.query_one(PromptInput)
        assert prompt.value == "a a"
        assert app.focused is prompt
        assert "ctrl+y to answer" in screen_text(app)
        assert len(app.state.questions) == 1
        await pilot.press("ctrl+y")
        await until(pilot, lambda: isinstance(app.focused, QuestionPanel), "ctrl+y moves to the question")
        assert prompt.value == "a a"
        await pilot.press("escape")
        await until(pilot, lambda: app.focused is prompt, "back in the input")
        await pilot.press("escape")
        await app.run_shown.wait()
        await until(pilot, lambda: app.state.status.state == "interrupted", "the run interrupted")
        assert prompt.value.startswith("a a")
    assert [e.decision for e in answers] == ["cancelled"]  # type: ignore[attr-defined]
    assert len(api.requests) == 1
