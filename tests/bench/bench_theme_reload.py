"""Benchmark: from a person's theme file saved to the new theme applied on screen (Textual's Pilot).

Run by hand: `python tests/bench/bench_theme_reload.py`. An app holding a ``Conversation`` (the part the
workbench and the replay share) shows a screenful of conversation in a theme from
``$CHIMERA_HOME/themes/``; the file is saved again with another error colour, and the time is taken
until the app has read it, applied it and refreshed the screen (``ThemeKeeper.reloaded``), and
checked on the screen's own lines. Prints the median and the worst of the runs (target 200 ms).
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

from textual.app import App, ComposeResult

from chimera.core.events import RunStarted, ToolCallFinished, ToolCallStarted
from chimera.themes import APP_CSS
from chimera.themes.choice import remember_theme
from chimera.tui.theme_keeper import ThemeKeeper
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.workbench.conversation import Conversation
from tests.tui_helpers import colour_at

RUNS = 15
NOTE = "✗ the build failed"
COLOURS = ("#AA2200", "#FF00AA")


def theme_file(error: str) -> str:
    return f'name = "ocean"\nprimary = "#2266AA"\nbackground = "#001122"\n[transcript]\nnotice_error = "{error}"\n'


class Bench(App[None]):
    CSS_PATH = APP_CSS

    def __init__(self) -> None:
        super().__init__()
        self.theme_keeper = ThemeKeeper(self)
        self.conversation = Conversation(self)
        self.transcript = self.conversation.transcript

    def compose(self) -> ComposeResult:
        yield TranscriptView(self.transcript, id="conversation")
        yield StatusLine(self.conversation.state.status, id="status")

    def on_mount(self) -> None:
        self.theme_keeper.start()
        self.transcript.apply(RunStarted(task="read the widget", model="m", loop="react"))
        code = "".join(f"{n:>6}\tdef f{n}(x):  return x * {n}  # a line of code\n" for n in range(1, 60))
        args = {"path": "widget.py"}
        self.transcript.apply(ToolCallStarted(call_id="r", name="read", args=args))
        self.transcript.apply(
            ToolCallFinished(call_id="r", name="read", args=args, is_error=False, duration_ms=1, output=code)
        )
        self.transcript.fold_all(False)
        self.conversation.say(NOTE, "error")


async def measure() -> list[float]:
    home = Path(tempfile.mkdtemp())
    os.environ["CHIMERA_HOME"] = str(home)
    folder = home / "themes"
    folder.mkdir(mode=0o700)
    path = folder / "ocean.toml"
    path.write_text(theme_file(COLOURS[0]))
    remember_theme(home, "ocean")
    app = Bench()
    times = []
    async with app.run_test(size=(120, 40)) as pilot:
        keeper = app.theme_keeper
        await keeper.watching.wait()
        await pilot.pause()
        for run in range(RUNS):
            colour = COLOURS[(run + 1) % 2]
            keeper.reloaded.clear()
            start = time.perf_counter()
            path.write_text(theme_file(colour))
            await keeper.reloaded.wait()
            times.append(time.perf_counter() - start)
            assert colour_at(app, NOTE) == colour.lower(), "the screen does not show the saved colour"
            await pilot.pause()
    return times


def main() -> None:
    times = asyncio.run(measure())
    print(
        f"a theme file saved to its colours on screen: median {statistics.median(times) * 1000:.0f} ms, "
        f"worst {max(times) * 1000:.0f} ms over {len(times)} saves (target 200 ms)"
    )


if __name__ == "__main__":
    main()
