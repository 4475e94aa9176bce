"""``TranscriptView``, the line-drawn transcript, under Textual's Pilot: folding, the cursor, the failed-call
jump, streaming into one entry, and a resize that re-wraps."""

from __future__ import annotations

import tracemalloc

import pytest
from textual.app import App
from textual.geometry import Region

from chimera.core.events import (
    MessageCompleted,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
)
from chimera.tui import entry_lines
from chimera.tui.state import Entry, Transcript
from chimera.tui.transcript_render import settled_length
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.tui_helpers import Harness, screen_text, until

OUTPUT = "".join(f"match {n}\n" for n in range(30))
GREP = {"pattern": "match"}
FALSE = {"command": "false"}


def a_run() -> list[StepEvent]:
    """A run as the loop publishes it: thinking, text, a call that works, one that fails, the answer."""
    answer = {"role": "assistant", "content": [{"type": "text", "text": "Looking."}]}
    final = {"role": "assistant", "content": [{"type": "text", "text": "All **done**."}]}
    return [
        RunStarted(task="find the matches", model="m", loop="react"),
        ThinkingDelta(text="I should grep.\nThen read."),
        TextDelta(text="Looking."),
        MessageCompleted(message=answer, stop_reason="tool_use"),
        ToolCallStarted(call_id="t1", name="grep", args={"pattern": "match"}),
        ToolCallFinished(
            call_id="t1", name="grep", args={"pattern": "match"}, is_error=False, duration_ms=12, output=OUTPUT
        ),
        ToolCallStarted(call_id="t2", name="bash", args={"command": "false"}),
        ToolCallFinished(
            call_id="t2", name="bash", args={"command": "false"}, is_error=True, duration_ms=5, output="exit 1"
        ),
        TextDelta(text="All **done**."),
        MessageCompleted(message=final, stop_reason="end_turn"),
        RunFinished(success=True, reason="completed", steps=2, cost=0.01),
    ]


def loaded() -> Harness:
    transcript = Transcript()
    transcript.apply_all(a_run())
    return Harness(transcript)


async def test_calls_fold_to_one_line_and_a_failure_is_open() -> None:
    app = loaded()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        shown = screen_text(app)
        assert "› find the matches" in shown
        assert "▸ thinking · 2 lines" in shown
        assert "I should grep." not in shown  # thinking folds
        assert "▸ ✓ grep  match · 0.01s · 30 lines" in shown
        assert "match 7" not in shown  # a call that went well folds to its line
        assert "▾ ✗ bash  false · 0.01s · 1 line" in shown
        assert "exit 1" in shown  # a failed one is open
        assert "All done." in shown


async def test_the_cursor_unfolds_a_call_and_n_jumps_to_the_failure() -> None:
    app = loaded()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        grep = next(i for i, e in enumerate(app.transcript.entries) if e.name == "grep")
        await pilot.press("n")
        failed = next(i for i, e in enumerate(app.transcript.entries) if e.failed)
        assert view.cursor == failed
        while view.cursor != grep:
            await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause()
        assert "match 7" in screen_text(app)  # unfolded: the whole output, scrolled to its start
        assert "▾ ✓ grep  match" in screen_text(app)
        await pilot.press("space")
        await pilot.pause()
        assert "match 7" not in screen_text(app)


async def test_z_folds_everything_then_unfolds_it() -> None:
    app = loaded()
    async with app.run_test(size=(80, 60)) as pilot:
        await pilot.press("z")  # something is open (the failure): everything folds
        await pilot.pause()
        shown = screen_text(app)
        assert "exit 1" not in shown
        assert "I should grep." not in shown
        await pilot.press("z")  # all folded: everything opens
        await pilot.pause()
        shown = screen_text(app)
        assert "I should grep." in shown
        assert "match 29" in shown
        assert "exit 1" in shown


async def test_streamed_text_redraws_only_its_entry_and_follows_the_end() -> None:
    transcript = Transcript()
    transcript.apply_all(a_run())
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        first = app.transcript.entries[0]
        rendered = view.entry_lines.by_entry[first.serial][1]
        transcript.apply(RunStarted(task="and more", model="m", loop="react"))
        for word in ("Streaming ", "the ", "next ", "answer."):
            transcript.apply(TextDelta(text=word))
            view.refresh_entries()
            await pilot.pause()
        assert "Streaming the next answer." in screen_text(app)  # the end stays in view
        assert view.entry_lines.by_entry[first.serial][1] is rendered  # untouched entries are not rendered again


async def test_a_streamed_batch_shows_at_the_end_in_the_next_frame() -> None:
    transcript = Transcript()
    for n in range(8):  # most of a screen: the answer makes it scroll, and the view follows its end
        transcript.note(f"earlier note {n}")
    transcript.apply(RunStarted(task="stream", model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        for n in range(8):
            transcript.apply(TextDelta(text=f"paragraph {n} of the answer\n\n"))
            view.refresh_entries()
            assert view.scroll_offset.y == view.max_scroll_y  # at its end already: the next frame shows the new text
            await pilot.pause()
            assert f"paragraph {n} of the answer" in screen_text(app)


async def test_a_streamed_word_redraws_the_lines_of_its_answer_not_the_screen() -> None:
    transcript = Transcript()
    for n in range(30):
        transcript.note(f"earlier note {n}")
    transcript.apply_all([RunStarted(task="stream", model="m", loop="react"), TextDelta(text="The answer begins")])
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        transcript.apply(TextDelta(text=" and"))
        view.refresh_entries()
        await pilot.pause()
        for word in (" goes", " on."):
            before = view.lines_drawn
            transcript.apply(TextDelta(text=word))
            view.refresh_entries()
            await pilot.pause()
            assert 0 < view.lines_drawn - before <= 2  # its one line (and the blank after it), not the notes
        assert "The answer begins and goes on." in screen_text(app)


async def test_a_growing_transcript_does_not_lay_out_the_screen_again() -> None:
    transcript = Transcript()
    for n in range(40):
        transcript.note(f"earlier note {n}")
    transcript.apply(RunStarted(task="stream", model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        screen = app.screen
        await pilot.pause()
        transcript.apply(TextDelta(text="The answer begins.\n\n"))  # the first growth: the scrollbar settles in
        view.refresh_entries()
        for _ in range(3):  # its messages may still be on their way on a busy machine: wait until none are
            await pilot.pause()
            await until(pilot, lambda: not (screen._layout_required or screen._scroll_required), "laid out")
        layouts = 0
        lay_out = screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            nonlocal layouts
            layouts += screen._layout_required or not kwargs.get("scroll")  # a whole layout, not a scroll's reflow
            lay_out(*args, **kwargs)  # type: ignore[arg-type]

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        for n in range(8):
            transcript.apply(TextDelta(text=f"paragraph {n} of the answer\n\n"))
            view.refresh_entries()
            await pilot.pause()
            assert f"paragraph {n} of the answer" in screen_text(app)
        assert layouts == 0  # only the view's height changed: nothing else on screen moves, so no layout
        assert view.vertical_scrollbar.window_virtual_size == view.virtual_size.height  # its scrollbar kept up
        await pilot.resize_terminal(60, 24)
        await pilot.pause()
        assert layouts > 0  # a new width is laid out as ever


def long_answer() -> str:
    """About 24 KB of Markdown: headings, paragraphs, lists and code, as a long answer has."""
    parts = []
    for n in range(20):
        parts.append(f"## Step {n}\n\n" + "Some **streamed** words about `item`, and more text to wrap. " * 10)
        parts.append("\n".join(f"- a point with `x{k}` and a [link](https://example.com/{k})" for k in range(6)))
        parts.append("```python\n" + "\n".join(f"def step_{k}(x):  return x * {k}  # code" for k in range(8)) + "\n```")
    return "\n\n".join(parts)


async def test_a_drawn_answer_keeps_its_lines_as_segments_not_strips() -> None:
    text = long_answer()
    transcript = Transcript()
    transcript.apply_all([*a_run()[:1], TextDelta(text=text)])
    transcript.apply(MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"))
    app = Harness(transcript)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        answer = transcript.entries[-1]
        view.entry_lines.lines(answer, view._width)  # drawn once: whatever rich caches on the way is in place
        del view.entry_lines.by_entry[answer.serial]
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            lines = view.entry_lines.lines(answer, view._width)
            held = tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()
        assert len(lines) > 300
        # Its lines are kept to be drawn again: as their segments (~33 bytes a character of Markdown), not
        # as Textual Strips, each of which carries ~1 KB of caches of its own (~52 bytes a character).
        assert held < 40 * len(text)


async def test_a_long_session_keeps_a_bounded_number_of_lines_and_draws_old_answers_again() -> None:
    transcript = Transcript()
    app = Harness(transcript)
    async with app.run_test(size=(100, 30)) as pilot:
        view = app.query_one(TranscriptView)
        view.entry_lines.budget = 1_500  # a few long answers' worth
        for turn in range(12):  # each answer is drawn as it arrives, as a live run's are
            answer = f"Answer {turn}.\n\n" + long_answer()
            transcript.apply_all([RunStarted(task=f"task {turn}", model="m", loop="react"), TextDelta(text=answer)])
            transcript.apply(MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"))
            view.refresh_entries()
            await pilot.pause()
        kept = sum(len(lines) for _, lines in view.entry_lines.by_entry.values() if isinstance(lines, list))
        assert kept <= 1_500  # not twelve answers' lines: older ones keep only their height
        height = view.virtual_size.height
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert "Answer 0." in screen_text(app)  # drawn again when it comes back on screen
        assert "task 0" in screen_text(app)
        assert view.virtual_size.height == height  # laid out from the heights it kept: nothing jumps


async def test_entries_never_drawn_are_estimated_once_and_again_only_when_they_change(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    transcript = Transcript()
    for _ in range(20):  # a history above the screen, never drawn
        transcript.apply_all(a_run())
    transcript.apply(RunStarted(task="stream", model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        estimated = []
        estimate = entry_lines.estimate

        def counted(entry: Entry, width: int) -> int:
            estimated.append(entry)
            return estimate(entry, width)

        monkeypatch.setattr(entry_lines, "estimate", counted)
        for word in ("Streaming ", "more ", "words."):
            transcript.apply(TextDelta(text=word))
            view.refresh_entries()
            await pilot.pause()
        assert estimated == []  # the history did not change: what it was estimated at stands
        height = view.virtual_size.height
        grep = next(index for index, entry in enumerate(transcript.entries) if entry.name == "grep")
        transcript.toggle(grep)  # far above the screen: opens to its 30 lines of output
        view.refresh_entries()
        assert estimated == [transcript.entries[grep]]
        assert view.virtual_size.height == height + 30  # its output's lines, as estimated until it is drawn


async def test_lines_take_the_theme_of_the_frame_they_are_drawn_in() -> None:
    app = loaded()
    async with app.run_test(size=(80, 40)) as pilot:  # taller than the transcript: blank lines below it
        view = app.query_one(TranscriptView)
        shown = []
        for theme in ("textual-light", "textual-dark"):
            app.theme = theme
            await pilot.pause()
            last = view.render_lines(Region(0, view.size.height - 1, view.size.width, 1))[0]
            shown.append({segment.style.bgcolor for segment in last if segment.style})
            assert shown[-1] == {view.rich_style.bgcolor}  # the blank line below is the theme's background
        assert shown[0] != shown[1]


async def test_a_resize_rewraps_the_cached_lines() -> None:
    transcript = Transcript()
    transcript.apply(RunStarted(task="word " * 30, model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(100, 24)) as pilot:
        view = app.query_one(TranscriptView)
        wide = view.virtual_size.height
        await pilot.resize_terminal(50, 24)
        await pilot.pause()
        assert view.virtual_size.height > wide  # the same words, on more lines
        assert all(len(line.rstrip()) <= 50 for line in screen_text(app).splitlines())


def test_only_blocks_outside_an_open_code_fence_are_settled() -> None:
    assert settled_length("one paragraph, still streaming") == 0
    assert settled_length("done.\n\nnext is stream") == len("done.\n\n")
    fenced = "Here:\n\n```python\nx = 1\n\ny = 2\n"  # the blank line is inside an open fence
    assert settled_length(fenced) == len("Here:\n\n")
    closed = fenced + "```\n\nAfter."
    assert settled_length(closed) == len(fenced + "```\n\n")


async def test_a_streaming_answer_renders_its_finished_blocks_once() -> None:
    transcript = Transcript()
    transcript.apply(RunStarted(task="write", model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        transcript.apply(TextDelta(text="First **block** done.\n\nSecond"))
        view.refresh_entries()
        await pilot.pause()
        answer = transcript.entries[-1]
        head = view.entry_lines.settled[answer.serial][1]
        for more in (" block", " grows", " word by word."):
            transcript.apply(TextDelta(text=more))
            view.refresh_entries()
            await pilot.pause()
            assert view.entry_lines.settled[answer.serial][1] is head  # the finished block is not rendered again
        assert "Second block grows word by word." in screen_text(app)
        assert "First block done." in screen_text(app)
        transcript.apply(MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"))
        view.refresh_entries()
        await pilot.pause()
        assert answer.serial not in view.entry_lines.settled  # complete: rendered whole, once
        assert "Second block grows word by word." in screen_text(app)


def screen_row(app: App[None], text: str) -> int:
    """The row of the screen where ``text`` is shown."""
    return next(y for y, line in enumerate(screen_text(app).splitlines()) if text in line)


async def test_a_drag_selects_text_as_shown_and_it_is_copied_without_the_gutter() -> None:
    """Dragging over the answer and the failure selects those words (no cursor mark, no fold arrows lost);
    the screen's copy takes exactly them."""
    app = loaded()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        top = screen_row(app, "▾ ✗ bash  false")
        bottom = screen_row(app, "All done.")
        await pilot.mouse_down("#transcript", offset=(2, top))
        await pilot.hover("#transcript", offset=(11, bottom))
        await pilot.mouse_up("#transcript", offset=(11, bottom))
        await pilot.pause()
        selected = app.screen.get_selected_text()
        assert selected is not None
        assert selected.splitlines()[0].startswith("▾ ✗ bash  false")
        assert "exit 1" in selected
        assert selected.endswith("All done.")
        copied: list[str] = []
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
        await pilot.press("ctrl+c")
        assert copied == [selected]


async def test_a_click_moves_the_cursor_and_a_click_on_the_arrow_folds() -> None:
    app = loaded()
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        view = app.query_one(TranscriptView)
        grep = next(i for i, e in enumerate(app.transcript.entries) if e.name == "grep")
        row = screen_row(app, "▸ ✓ grep  match")
        await pilot.click("#transcript", offset=(20, row))
        assert view.cursor == grep
        assert app.transcript.entries[grep].folded  # a click on the words only moves the cursor
        await pilot.click("#transcript", offset=(2, row))
        await pilot.pause()
        assert not app.transcript.entries[grep].folded
        assert "match 7" in screen_text(app)


async def test_a_running_call_shows_its_last_lines_as_a_terminal_would_and_a_tick_redraws_only_it() -> None:
    """Open, a running call shows its last 20 lines (a progress bar at its latest state); a tick of its time
    redraws that call and nothing else."""
    clock = [10.0]
    transcript = Transcript(clock=lambda: clock[0])
    transcript.apply_all(a_run())
    transcript.apply(ToolCallStarted(call_id="b1", name="bash", args={"command": "make"}))
    transcript.apply(ToolOutputDelta(call_id="b1", text="".join(f"step {n}\n" for n in range(30))))
    transcript.apply(ToolOutputDelta(call_id="b1", text="fetching 10%\rfetching 55%\rfetching 100%\r\n"))
    transcript.toggle(len(transcript) - 1)
    app = Harness(transcript)
    async with app.run_test(size=(80, 50)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        shown = screen_text(app)
        lines = [line.strip() for line in shown.splitlines()]
        assert "▾ … bash  make · running 0s" in lines
        assert lines.index("…") + 1 == lines.index("step 11")  # only the last 20 lines, after a mark
        assert "step 10" not in lines
        assert lines[lines.index("step 29") + 1] == "fetching 100%"
        assert "55%" not in shown
        finished = transcript.entries[0]
        kept = view.entry_lines.by_entry[finished.serial][1]
        clock[0] += 4
        assert transcript.tick()
        view.refresh_entries()
        await pilot.pause()
        assert "running 4s" in screen_text(app)
        assert view.entry_lines.by_entry[finished.serial][1] is kept  # the rest is not drawn again


async def test_the_scrollbar_shows_where_the_view_is_after_folding_everything_and_unfolding_one() -> None:
    """Folded all, the transcript fits and its scrollbar goes; unfolding one brings it back at the view's place
    (it came back where the view had been before the fold, at the end, while the view showed the top)."""
    app = loaded()
    async with app.run_test(size=(80, 14)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        await pilot.press("z", "z")  # everything folds, then everything unfolds
        await pilot.pause()
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert view.max_scroll_y > 0
        await pilot.press("z")  # everything folds: the transcript fits
        await pilot.pause()
        grep = next(i for i, e in enumerate(app.transcript.entries) if e.name == "grep")
        while view.cursor != grep:
            await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause()
        assert view.max_scroll_y > 0
        assert view.vertical_scrollbar.position == view.scroll_offset.y


async def test_a_transcript_told_again_shows_its_new_entries_not_lines_kept_for_old_ones() -> None:
    """After a clear (a switch tells the conversation again), new entries at the same versions as old ones are
    drawn afresh: the view keys what it keeps by an entry's serial, never by where it sits in memory."""
    app = loaded()
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await pilot.pause()
        assert "find the matches" in screen_text(app)
        for round_ in range(3):
            app.transcript.clear()
            app.transcript.apply_all([RunStarted(task=f"another task {round_}", model="m", loop="react")])
            app.transcript.note(f"note {round_}")
            view.refresh_entries()
            await pilot.pause()
            shown = screen_text(app)
            assert f"another task {round_}" in shown
            assert f"note {round_}" in shown
            assert "find the matches" not in shown
