"""Snapshots (pytest-textual-snapshot) of the compare view at 80×24 (a row a variant) and 120×40 (a column a
variant): one variant asking to write, its label on the question, the other still streaming; the keys on
screen. Accept a deliberate change with ``pytest tests/tui/test_compare_snapshots.py -n 0 --snapshot-update``
after looking at the new pictures."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.screens.compare import CompareScreen
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, by_model, message, paused, text, tool_use
from tests.tui_helpers import screen_text, send, still, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_compare_view_while_the_variants_run(
    snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """Two variants live: model-a asks to write (the question names it, y/n answer it), model-b streams."""
    release, reached = threading.Event(), threading.Event()
    api.script(message(text("Hi.")))
    app = still(build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask")))

    async def asking(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await send(pilot, "write the greeting")
        await app.run_shown.wait()
        await until(pilot, lambda: not app.running, "the first run to end")
        api.responder = by_model(
            {
                "model-a": [
                    message(
                        tool_use("w", "write", {"path": "a.txt", "content": "hi"}),
                        stop_reason="tool_use",
                        model="model-a",
                    ),
                    message(text("A done."), model="model-a"),
                ],
                "model-b": [paused(message(text("Thinking it over slowly."), model="model-b"), release, reached)],
            }
        )
        await send(pilot, "/compare model=model-a model=model-b")
        await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare view")
        await until(pilot, lambda: reached.is_set() and "model-a asks" in screen_text(app), "the question")
        await pilot.pause()

    try:
        assert snap_compare(app, terminal_size=size, run_before=asking)
    finally:
        release.set()
