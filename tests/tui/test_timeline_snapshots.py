"""Snapshots (pytest-textual-snapshot) of the strategy's work in the timeline at 80×24 and 120×40: a
TreeOfThought turn's candidates, folded, with the one taken marked and opened, after a reflection.
Accept a deliberate change with ``pytest tests/tui/test_timeline_snapshots.py -n 0 --snapshot-update``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import entries, screen_text, send, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_tree_of_thought_candidates(
    snap_compare: Snap, api: FakeAnthropic, project: Path, size: tuple[int, int]
) -> None:
    """Three candidates folded with their scores, the one taken marked with why and opened, then the answer."""
    api.script(*(message(text("It is blue.")) for _ in range(3)), message(text("1: 4\n2: 9\n3: 2")))
    app = build_app(RunOptions(workdir=project, model=MODEL, loop="tot", candidates=3))

    async def chosen(pilot: Pilot[int]) -> None:
        await pilot.pause()  # laid out: the click lands on the input
        await send(pilot, "what colour is the sky")
        await until(pilot, lambda: bool(entries(app, "notice")), "the run's end")
        taken = next(c for c in entries(app, "candidate") if c.data.get("chosen"))
        app.transcript.toggle(app.transcript.entries.index(taken))
        app.query_one(TranscriptView).refresh_entries()
        app.conversation.show_status(session="5e55102d", workspace="~/project")  # the same in every picture
        await until(pilot, lambda: "▾ candidate" in screen_text(app) and "$0.0032" in screen_text(app), "it opened")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=chosen)
