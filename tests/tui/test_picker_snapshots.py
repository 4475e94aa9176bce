"""Snapshots of the session picker (pytest-textual-snapshot) at 80×24 and 120×40, as `chimera --resume` opens it.

Accept a deliberate change of look with ``pytest tests/tui/test_picker_snapshots.py -n 0 --snapshot-update``
after looking at the new pictures. The sessions are fixed: their workspaces, ids and titles, and ages in the
middle of what each says (minutes, hours, days), so the words do not move while the test runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from chimera.tui.picker_app import PickerApp
from chimera.tui.screens.sessions import SessionPicker
from tests.catalog_helpers import write_session
from tests.tui_helpers import until

Snap = Callable[..., bool]
HERE = "/work/stats"


@pytest.fixture(autouse=True)
def sessions(isolated_env: Path) -> None:
    """Five sessions in three workspaces, each run ended its own way."""
    now = time.time()
    write_session(isolated_env, "18c3f0a1b2c9d4e5", "/work/site", "tidy the README's install steps", updated=now - 330)
    write_session(
        isolated_env,
        "18c3e2b7c1d0a9f8",
        HERE,
        "fix the median of an even list and make the tests pass",
        updated=now - 3.5 * 3600,
        answers=4,
    )
    write_session(
        isolated_env, "18c3d9e0f4a3b2c1", HERE, "add a --json flag", updated=now - 2.5 * 86400, ending="failed"
    )
    write_session(isolated_env, "18c3c1d2e3f4a5b6", "/work/parser", "profile the parser", updated=now - 1.5 * 86400)
    write_session(isolated_env, "18c3b0a9f8e7d6c5", "/work/site", "check the links", updated=now - 4.5 * 86400)


async def listed(pilot: Pilot[Any]) -> None:
    app = pilot.app
    await until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.sessions is not None, "rows")
    await pilot.pause()


@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=["80x24", "120x40"])
def test_the_picker(snap_compare: Snap, size: tuple[int, int]) -> None:
    """The workspace's two sessions first, then the others, newest first; the cursor on the first."""
    assert snap_compare(PickerApp(Path(HERE)), terminal_size=size, run_before=listed)


def test_the_picker_filtered(snap_compare: Snap) -> None:
    """`site` typed: the two sessions of /work/site, the count saying so."""

    async def filtered(pilot: Pilot[Any]) -> None:
        await listed(pilot)
        await pilot.press(*"site", "down")
        await pilot.pause()

    assert snap_compare(PickerApp(Path(HERE)), terminal_size=(80, 24), run_before=filtered)
