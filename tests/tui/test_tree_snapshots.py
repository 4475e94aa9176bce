"""Snapshots (pytest-textual-snapshot) of the session tree panel at 80×24 (over the conversation) and 120×40
(beside it): a session with a named answer and two branches, the cursor on the leaf. Accept a deliberate
change with ``pytest tests/tui/test_tree_snapshots.py -n 0 --snapshot-update`` after looking at them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.tree_helpers import branched_session
from tests.tui_helpers import pictured, screen_text, send, still, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda size: f"{size[0]}x{size[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_tree_panel(snap_compare: Snap, isolated_env: Path, project: Path, size: tuple[int, int]) -> None:
    """The tree's lines with their connectors, marks, names and ages, the keys, and the leaf's preview."""
    branched_session(isolated_env, project)
    app = still(build_app(RunOptions(resume="s1", model=MODEL)))
    newest = max(node.ts for node in app.session.store.tree.nodes.values())
    app.session_tree.clock = lambda: newest + 150

    async def shown(pilot: Pilot[int]) -> None:
        await until(pilot, app.history_shown.is_set, "the history")
        await send(pilot, "/tree")
        await until(pilot, lambda: "You are here" in screen_text(app), "the leaf's preview")
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=size, run_before=shown)
