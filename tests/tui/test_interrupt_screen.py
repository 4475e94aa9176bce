"""Escape while an answer streams, with steering sent and a task queued: the words already on screen stay,
marked as cut off and never seen by the model; the steering and the queued task come back to the input as two
pieces, each marked for what it was; sent again, both reach the model as they were written."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.transcript_render import CUT_OFF
from chimera.tui.widgets.prompt_input import PromptInput
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text
from tests.tui_helpers import entries, screen_text, send, until

PARTIAL = "The median sorts the values first and then"


@pytest.mark.usefixtures("model_env")
async def test_an_interrupted_answer_stays_marked_and_the_words_come_back_marked(
    api: FakeAnthropic, project: Path
) -> None:
    """What streamed before escape stays on screen, marked as not kept; steering and a queued task come back as
    two marked pieces of the input, and enter sends both, one per line."""
    release, reached = threading.Event(), threading.Event()
    api.script(paused(message(text(PARTIAL + " takes the middle one.", pieces=6)), release, reached, after=6))
    api.script(message(text("Both done.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    try:
        async with app.run_test(size=(80, 24)) as pilot:
            await send(pilot, "explain the median")
            await until(pilot, reached.is_set, "the answer streaming")
            await until(pilot, lambda: "The median sorts" in screen_text(app), "the first words on screen")
            await send(pilot, "also mention the mean")  # steering: read at the next step
            await pilot.press(*"then fix the tests", "tab")  # queued as the next task
            await until(pilot, lambda: app.session.follow_ups != [], "the task queued")
            await pilot.press("escape")
            await app.run_shown.wait()
            prompt = app.query_one(PromptInput)
            await until(pilot, lambda: "[steering:" in prompt.value and "[queued:" in prompt.value, "both back")
            shown = screen_text(app)
            assert "The median sorts" in shown  # the partial answer stays
            assert CUT_OFF[:40] in shown  # marked: the model never sees it
            assert "⏹ interrupted" in shown
            assert prompt.value == "[steering: also mention the mean]⏎[queued: then fix the tests]"
            assert [e.data.get("cut_off") for e in entries(app, "text")] == [True]
            await pilot.press("enter")
            await app.run_shown.wait()
    finally:
        release.set()
    sent = api.requests[1].messages
    assert sent[-1]["content"] == "also mention the mean\nthen fix the tests"
    assert PARTIAL not in str(sent)  # the cut-off words were never part of the conversation
