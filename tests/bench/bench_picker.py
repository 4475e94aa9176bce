"""Benchmark: the session picker's first paint with 1,000 sessions, and a filter typed over them.

Run by hand: `python tests/bench/bench_picker.py`. The sessions are written as Chimera leaves them, each
with its catalog line; the picker runs headless under Textual's Pilot at 120×40 and every frame is encoded
for a terminal as a real one is. Prints, medians over ROUNDS:

- reading the catalog for 1,000 sessions (``catalog_sessions``: the file, the folder's names, a size each;
  done off the event loop);
- the picker's own work for its first paint: listing the rows (``SessionList.show``) and drawing the lines
  on screen (``SessionList.render_lines``) — the target is one frame, 16 ms;
- from pushing the picker to the frame that shows its rows (the catalog read, Textual's mount and layout);
- a key typed in the filter: the picker's own work (filtering 1,000 sessions, listing and drawing what is
  left), and from the key to the frame that shows it (Pilot's own waits included).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual.app import App

from chimera.core.sessions.listing import catalog_sessions
from chimera.tui.picker_app import PickerApp
from chimera.tui.screens.sessions import SessionPicker
from chimera.tui.widgets.session_list import SessionList
from tests.bench.bench_view import Frames
from tests.catalog_helpers import catalogued_sessions

SESSIONS = 1_000
ROUNDS = 15
SIZE = (120, 40)


class Timed:
    """Seconds spent in a method of a class, summed from :meth:`reset`."""

    def __init__(self, cls: type[Any], name: str) -> None:
        self.spent = 0.0
        original: Callable[..., Any] = getattr(cls, name)
        timed = self

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                timed.spent += time.perf_counter() - start

        setattr(cls, name, wrapper)

    def reset(self) -> None:
        self.spent = 0.0


def _rows(app: App[Any]) -> int:
    screen = app.screen
    if not isinstance(screen, SessionPicker) or screen.sessions is None:
        return -1
    return len(screen.query_one(SessionList).rows)


async def _first_paint(show: Timed, draw: Timed, filtering: Timed) -> dict[str, float]:
    app = PickerApp(Path("/work/bench-3"))
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await frames.when(lambda: _rows(app) == SESSIONS)
        await pilot.press("escape")
    app2 = App[None]()
    async with app2.run_test(size=SIZE) as pilot:
        frames = Frames(app2)
        await pilot.pause()
        show.reset()
        draw.reset()
        start = time.perf_counter()
        app2.push_screen(SessionPicker("/work/bench-3"))
        shown = await frames.when(lambda: _rows(app2) == SESSIONS)
        own = show.spent + draw.spent
        draw.reset()
        filtering.reset()
        typed = time.perf_counter()
        await pilot.press("7")
        narrowed = await frames.when(lambda: 0 <= _rows(app2) < SESSIONS)
    return {"own": own, "to_frame": shown - start, "key": narrowed - typed, "key_own": filtering.spent + draw.spent}


def main() -> None:
    with tempfile.TemporaryDirectory() as home:
        os.environ["CHIMERA_HOME"] = home
        catalogued_sessions(Path(home), SESSIONS, "/work/bench-3")
        reads = []
        for _ in range(ROUNDS):
            start = time.perf_counter()
            listed = catalog_sessions(Path(home))
            reads.append(time.perf_counter() - start)
        assert len(listed) == SESSIONS
        show, draw = Timed(SessionList, "show"), Timed(SessionList, "render_lines")
        filtering = Timed(SessionPicker, "_filter")
        runs = [asyncio.run(_first_paint(show, draw, filtering)) for _ in range(ROUNDS)]

    def ms(values: list[float]) -> str:
        return f"{statistics.median(values) * 1000:.1f} ms"

    print(f"catalog read, {SESSIONS:,} sessions (off the event loop): {ms(reads)}")
    own = ms([r["own"] for r in runs])
    print(f"picker's own work to its first paint (rows listed, lines drawn): {own} (target 16)")
    print(f"pushing the picker to the frame with its rows: {ms([r['to_frame'] for r in runs])}")
    print(f"a key typed in the filter, the picker's own work: {ms([r['key_own'] for r in runs])}")
    print(f"the same, from the key to the frame with the narrowed list: {ms([r['key'] for r in runs])}")


if __name__ == "__main__":
    main()
