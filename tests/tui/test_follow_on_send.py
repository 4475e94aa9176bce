"""Sending a message while the conversation is scrolled up brings the view to its end, and it follows the
run from there."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.session_helpers import record_fixed_session
from tests.tui_helpers import screen_text, send, until


@pytest.mark.usefixtures("model_env")
async def test_a_task_sent_while_scrolled_up_shows_the_end(
    api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    """A resumed session scrolled to its top: a task sent brings the view down, and its answer shows there."""
    api.script(message(text("Here is the end.")))
    session = record_fixed_session(isolated_env, tmp_path)
    app = build_app(RunOptions(resume=session, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.history_shown.wait()
        await pilot.pause()
        view = app.query_one(TranscriptView)
        app.transcript.fold_all(False)  # taller than the screen
        view.refresh_entries()
        await pilot.pause()
        view.scroll_home(animate=False, immediate=True)
        await until(pilot, lambda: view.scroll_offset.y == 0 and view.max_scroll_y > 10, "the view at its top")
        await send(pilot, "one more thing")
        await app.run_shown.wait()
        await until(pilot, lambda: "Here is the end." in screen_text(app), "the answer on screen")
        assert view.scroll_offset.y >= view.max_scroll_y - 1
