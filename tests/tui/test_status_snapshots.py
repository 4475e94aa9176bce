"""Snapshots (pytest-textual-snapshot) of the status line and the footer while a run works, at 80×24 and
120×40: the spinner with the time elapsed, the parts that fit, the keys that work now (esc first). Accept a
deliberate change with ``pytest tests/tui/test_status_snapshots.py -n 0 --snapshot-update``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, stalled, text
from tests.tui_helpers import screen_text, send, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_status_line_and_footer_while_running(
    snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """A reply still streaming: the spinner and 0s, model, tokens and cost; the footer offers esc first."""
    api.script(stalled(text("Looking at the files")))
    app = build_app(RunOptions(workdir=project, model=MODEL))

    async def running(pilot: Pilot[int]) -> None:
        await pilot.pause()  # laid out: the click lands on the input
        await send(pilot, "tidy the project")
        await until(pilot, lambda: "Looking at the files" in screen_text(app), "the reply streaming")
        status = app.state.status
        started = status.started or 0.0
        status.clock = lambda: started  # the same spinner frame and time in every picture
        app.conversation.show_status(session="5e55102d", workspace="~/project")
        await until(pilot, lambda: "esc interrupt" in screen_text(app), "the footer while running")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=running)
