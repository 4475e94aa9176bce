"""Benchmark: the command palette with the whole registry, its first paint and a key typed in it.

Run by hand: `python tests/bench/bench_palette.py`. The workbench runs headless under Textual's Pilot at 120×40
on a session of the loopback server (no request is sent) and every frame is encoded for a terminal as a real
one is. Prints, medians over ROUNDS:

- the palette's own work for its first paint: Chimera's provider listing every command that works now with its
  choices (``WorkbenchCommands.discover``) — the target is one frame, 16 ms;
- the same for a key typed: the provider scoring every entry against the query (``WorkbenchCommands.search``);
- from ctrl+p to the frame that shows the entries, and from a key to the frame that shows its hits (Textual's
  palette, its mount, layout and drawing, and Pilot's own waits included).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual.command import CommandList, CommandPalette

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.command_views import WorkbenchCommands
from tests.bench.bench_view import Frames
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic

ROUNDS = 15
SIZE = (120, 40)


async def _spent(generator: Any) -> tuple[float, int]:
    """The seconds an async generator of hits takes to give them all, and how many it gave."""
    start = time.perf_counter()
    count = 0
    async for _ in generator:
        count += 1
    return time.perf_counter() - start, count


def _hits(app: ChimeraApp) -> int:
    screen = app.screen
    return screen.query_one(CommandList).option_count if isinstance(screen, CommandPalette) else -1


async def _round(workdir: Path) -> dict[str, float]:
    app = build_app(RunOptions(workdir=workdir, model=DEFAULT_MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        provider = WorkbenchCommands(app.screen)
        discover, listed = await _spent(provider.discover())
        search, found = await _spent(provider.search("mo"))
        assert listed > 20, listed
        assert found > 0, found
        frames = Frames(app)
        start = time.perf_counter()
        await pilot.press("ctrl+p")
        shown = await frames.when(lambda: _hits(app) >= listed)
        typed = time.perf_counter()
        await pilot.press("m")
        narrowed = await frames.when(lambda: 0 < _hits(app) < listed)
        await pilot.press("escape")
    return {"discover": discover, "search": search, "to_frame": shown - start, "key": narrowed - typed}


def main() -> None:
    with tempfile.TemporaryDirectory() as home, FakeAnthropic() as api:
        os.environ.update({"CHIMERA_HOME": home, "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "k"})
        workdir = Path(home) / "project"
        workdir.mkdir()
        runs = [asyncio.run(_round(workdir)) for _ in range(ROUNDS)]
        assert not api.requests

    def ms(key: str) -> str:
        return f"{statistics.median(r[key] for r in runs) * 1000:.2f} ms"

    print(f"the palette's own work for its first paint (every command and choice listed): {ms('discover')} (target 16)")
    print(f"a key typed, the palette's own work (every entry scored): {ms('search')}")
    print(f"from ctrl+p to the frame with the entries: {ms('to_frame')}")
    print(f"from a key to the frame with its hits: {ms('key')}")


if __name__ == "__main__":
    main()
