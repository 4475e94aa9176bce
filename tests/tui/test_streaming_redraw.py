"""A reply streaming into a long answer: each frame draws only the lines that changed, and what the screen
shows is always what a view drawn afresh would show (no line kept from a frame before)."""

from __future__ import annotations

from chimera.core.events import RunStarted, TextDelta
from chimera.tui.state import Transcript
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.tui_helpers import Harness, screen_text

PARAGRAPH = "Some words of the answer that wrap across the width of the view, one after another. " * 3


async def test_a_word_at_the_end_of_a_long_answer_redraws_its_last_lines_not_the_answer() -> None:
    """An answer taller than the screen: a word added to its open paragraph redraws that paragraph's lines."""
    transcript = Transcript()
    transcript.apply_all([RunStarted(task="stream", model="m", loop="react"), TextDelta(text="Begins.\n\n")])
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        for n in range(12):  # finished paragraphs, then an open one: the answer fills the screen and more
            transcript.apply(TextDelta(text=f"{n}: {PARAGRAPH}\n\n"))
            view.refresh_entries()
            await pilot.pause()
        transcript.apply(TextDelta(text="The open paragraph"))
        view.refresh_entries()
        await pilot.pause()
        for word in (" goes", " on"):
            before = view.lines_drawn
            transcript.apply(TextDelta(text=word))
            view.refresh_entries()
            await pilot.pause()
            assert 0 < view.lines_drawn - before <= 2  # the open paragraph's line (and the blank after it)
        assert "The open paragraph goes on" in screen_text(app)


async def test_after_streaming_scrolling_and_a_moved_cursor_the_screen_is_what_a_fresh_view_draws() -> None:
    """Lines kept from earlier frames never show what is no longer there: the screen equals a new view's."""
    transcript = Transcript()
    transcript.apply(RunStarted(task="stream", model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        for n in range(30):
            transcript.apply(TextDelta(text=f"part {n} " + ("\n\n" if n % 4 == 3 else "")))
            view.refresh_entries()
            await pilot.pause()
        await pilot.press("up", "up", "pageup", "down")
        await pilot.pause()
        shown = screen_text(app)
        fresh = Harness(transcript)
        async with fresh.run_test(size=(80, 24)) as other:
            again = fresh.query_one(TranscriptView)
            again.cursor = view.cursor
            again.scroll_to(y=view.scroll_offset.y, animate=False, immediate=True)
            again.refresh()
            await other.pause()
            assert screen_text(fresh) == shown
