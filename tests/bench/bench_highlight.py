"""Benchmark: what syntax colours cost the conversation view, through a real TranscriptView (Textual's Pilot).

Run by hand: `python tests/bench/bench_highlight.py`. Prints the median of several runs of:

- drawing a screen of an unfolded 2,000-line read (real Python source) whose lines are not drawn yet:
  coloured (a `.py` path) against plain (a path no lexer knows), as when it is first unfolded, and
  the same output drawn as one Rich ``Text`` (how every read was drawn before it was coloured);
- the same screen again after a theme switch, or drawn again at a new width: the lexer's work is kept,
  only the lines are drawn again;
- rendering a streaming answer's open tail, a 200-line Python block, as on each delta: plain (what
  the view does) against coloured (what it would cost if the open block were highlighted).
"""

from __future__ import annotations

import asyncio
import inspect
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import textual.widget
from rich.text import Text
from textual.app import App, ComposeResult

from chimera.core.events import RunStarted, ToolCallFinished, ToolCallStarted
from chimera.themes import CHIMERA_DARK, CHIMERA_LIGHT, THEMES
from chimera.tui import highlight
from chimera.tui.state import Entry, Transcript
from chimera.tui.transcript_render import render_entry
from chimera.tui.widgets.transcript_view import TranscriptView

RUNS = 7
SOURCE = Path(inspect.getsourcefile(textual.widget) or "").read_text().splitlines()


class Bench(App[None]):
    def __init__(self, transcript: Transcript) -> None:
        super().__init__()
        self.transcript = transcript

    def compose(self) -> ComposeResult:
        yield TranscriptView(self.transcript)

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        self.theme = CHIMERA_DARK.name


def _output(lines: int) -> str:
    return "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(SOURCE[:lines], 1))


def _read(path: str, lines: int) -> Transcript:
    output = _output(lines)
    transcript = Transcript()
    transcript.apply(RunStarted(task="read it", model="m", loop="react"))
    transcript.apply(ToolCallStarted(call_id="r", name="read", args={"path": path}))
    transcript.apply(
        ToolCallFinished(call_id="r", name="read", args={"path": path}, is_error=False, duration_ms=1, output=output)
    )
    transcript.fold_all(False)
    return transcript


async def _screen(path: str) -> tuple[float, float, float]:
    """A screen of the read drawn fresh (its lines rendered), again after a theme switch, and again at a
    new width."""
    app = Bench(_read(path, 2_000))
    fresh, recoloured, rewrapped = [], [], []
    async with app.run_test(size=(120, 40)) as pilot:
        view = app.query_one(TranscriptView)
        view.refresh_entries()
        await pilot.pause()

        def draw() -> float:
            start = time.perf_counter()
            for y in range(view.size.height):
                view.render_line(y)
            return time.perf_counter() - start

        for turn in range(RUNS):
            view._lines.clear()
            highlight._numbered.cache_clear()
            fresh.append(draw())
            app.theme = (CHIMERA_LIGHT if turn % 2 == 0 else CHIMERA_DARK).name
            await pilot.pause()
            await pilot.pause()
            draw()  # the switch may have drawn already; time a switch by hand, as the view does it
            start = time.perf_counter()
            view._recolour(app.current_theme)
            recoloured.append(draw() + time.perf_counter() - start)
            view._width -= 1  # as a resize does it, without waiting for the terminal
            rewrapped.append(draw())
            view._width += 1
    return statistics.median(fresh), statistics.median(recoloured), statistics.median(rewrapped)


async def _as_text() -> float:
    """The read's output drawn as one Rich Text."""
    output = _output(2_000).rstrip("\n")
    app = Bench(Transcript())
    times = []
    async with app.run_test(size=(120, 40)):
        view = app.query_one(TranscriptView)
        for _ in range(RUNS):
            start = time.perf_counter()
            view._draw(Text(output), 118)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


async def _tail() -> tuple[float, float]:
    """A 200-line open Python block rendered as a streaming tail (plain) and as a finished block (coloured)."""
    tail = "```python\n" + "\n".join(SOURCE[:200]) + "\n"
    app = Bench(Transcript())
    plain, coloured = [], []
    async with app.run_test(size=(120, 40)):
        view = app.query_one(TranscriptView)
        for _ in range(RUNS):
            for streaming, times in ((True, plain), (False, coloured)):
                start = time.perf_counter()
                view._draw(render_entry(Entry("text", tail, streaming=streaming), view.look), 118)
                times.append(time.perf_counter() - start)
    return statistics.median(plain), statistics.median(coloured)


def main() -> None:
    coloured, recoloured, rewrapped = asyncio.run(_screen("src/widget.py"))
    plain, _, plain_rewrapped = asyncio.run(_screen("src/widget.unknownext"))
    print(
        f"a screen of a 2,000-line read, first drawn: coloured {coloured * 1000:6.1f} ms, plain {plain * 1000:6.1f} ms"
    )
    print(f"the same after a theme switch:              coloured {recoloured * 1000:6.1f} ms")
    print(
        f"the same at a new width:                    coloured {rewrapped * 1000:6.1f} ms,"
        f" plain {plain_rewrapped * 1000:6.1f} ms"
    )
    print(f"the same output drawn as one Rich Text (before):     {asyncio.run(_as_text()) * 1000:6.1f} ms")
    tail_plain, tail_coloured = asyncio.run(_tail())
    print(
        f"a streaming tail holding a 200-line Python block: plain {tail_plain * 1000:6.1f} ms a delta"
        f" (coloured would be {tail_coloured * 1000:.1f} ms)"
    )


if __name__ == "__main__":
    main()
