"""Benchmark: the workbench's conversation view under load, through the real app (Textual's Pilot).

Run by hand: `python tests/bench/bench_view.py`. Prints:

- a 10,000-entry session resumed: from starting the app to its first frame with the
  history on screen, and scrolling from the top to the end;
- a 5,000-entry transcript: appending one entry, and folding one, each to its next frame;
- streaming 400 chunks of Markdown into one answer, all at once, turn after turn: time a turn.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.events import MessageCompleted, RunFinished, RunStarted, TextDelta, ToolCallFinished, ToolCallStarted
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.bench.bench_sessions import _build

CHUNK = "Some **streamed** words, a `name`, and more text to wrap. "


async def _resume(home: Path) -> tuple[float, float]:
    app = build_app(RunOptions(resume="bench", model="bench"))
    start = time.perf_counter()
    async with app.run_test(size=(120, 40)) as pilot:
        await app.history_shown.wait()
        await pilot.pause()
        first = time.perf_counter() - start
        view = app.query_one(TranscriptView)
        start = time.perf_counter()
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        scrolled = time.perf_counter() - start
    return first, scrolled


def _events(index: int) -> list[object]:
    args = {"path": f"src/m{index}.py"}
    output = "".join(f"{n:>6}\tline {n}\n" for n in range(40))
    return [
        RunStarted(task=f"task {index}", model="m", loop="react"),
        ToolCallStarted(call_id=f"c{index}", name="read", args=args),
        ToolCallFinished(call_id=f"c{index}", name="read", args=args, is_error=False, duration_ms=3, output=output),
        TextDelta(text=f"Answer {index}: " + CHUNK * 3),
        MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"),
        RunFinished(success=True, reason="completed", steps=2, cost=0.0),
    ]


async def _big_transcript() -> tuple[float, float, float, float]:
    app = build_app(RunOptions(workdir=Path.cwd(), model="bench"))
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(TranscriptView)
        for index in range(1_000):  # 5 entries each: 5,000 entries
            app.transcript.apply_all(_events(index))  # type: ignore[arg-type]
        view.refresh_entries()
        await pilot.pause()
        appends, toggles, idle, ours = [], [], [], []

        def draw() -> None:  # what a frame asks of the view: every visible line
            for y in range(view.size.height):
                view.render_line(y)

        for index in range(20):
            start = time.perf_counter()
            view.refresh()
            await pilot.pause()
            idle.append(time.perf_counter() - start)
            start = time.perf_counter()
            app.transcript.note(f"one more {index}")
            view.refresh_entries()
            await pilot.pause()
            appends.append(time.perf_counter() - start)
            start = time.perf_counter()
            app.transcript.toggle(len(app.transcript.entries) - 3)
            view.refresh_entries()
            await pilot.pause()
            toggles.append(time.perf_counter() - start)
            start = time.perf_counter()
            app.transcript.toggle(len(app.transcript.entries) - 3)
            view._layout()
            draw()
            ours.append(time.perf_counter() - start)
    return tuple(statistics.median(times) for times in (appends, toggles, idle, ours))  # type: ignore[return-value]


async def _streaming(turns: int) -> list[float]:
    app = build_app(RunOptions(workdir=Path.cwd(), model="bench"))
    times = []
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(TranscriptView)
        for turn in range(turns):
            start = time.perf_counter()
            app.transcript.apply(RunStarted(task=f"turn {turn}", model="m", loop="react"))
            for piece in range(400):
                app.transcript.apply(TextDelta(text=CHUNK + ("\n\n" if piece % 20 == 19 else "")))
                if piece % 20 == 19:  # the bridge forwards a batch a frame
                    view.refresh_entries()
                    await pilot.pause()
            app.transcript.apply(MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"))
            view.refresh_entries()
            await pilot.pause()
            times.append(time.perf_counter() - start)
    return times


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["CHIMERA_HOME"] = str(home)
        for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
            os.environ.pop(name, None)
        os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # never called: a model is configured, not the demo
        _build(home, 10_000)
        first, scrolled = asyncio.run(_resume(home))
        print(f"resume a 10,000-entry session to its first frame   {first * 1000:8.0f} ms   (target 1,000)")
        print(f"the same: scroll from its top to its end           {scrolled * 1000:8.0f} ms")
        append, toggle, idle, layout = asyncio.run(_big_transcript())  # layout: the view's own work
        print(f"5,000 entries: append one, to the next frame       {append * 1000:8.1f} ms   (target 16)")
        print(f"5,000 entries: fold one, to the next frame         {toggle * 1000:8.1f} ms   (target 16)")
        print(f"the same: a frame with nothing changed (Pilot's)   {idle * 1000:8.1f} ms")
        print(f"the same: the view's own work for a fold (layout, every visible line) {layout * 1000:.1f} ms")
        times = asyncio.run(_streaming(10))
        print(f"400 chunks a turn: turn 1 {times[0]:.2f} s, turn 10 {times[-1]:.2f} s ({times[-1] / times[0]:.2f}x)")


if __name__ == "__main__":
    main()
