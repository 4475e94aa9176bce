"""Snapshots (pytest-textual-snapshot) of the help and of the completions of a command being typed, at 80×24
and 120×40. Accept a deliberate change with ``pytest tests/tui/test_command_snapshots.py -n 0 --snapshot-update``
after looking at the new pictures."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.screens.help import HelpScreen
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.welcome import Welcome
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.tui_helpers import screen_text, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_help(snap_compare: Snap, project: Path, size: tuple[int, int]) -> None:
    """F1 on a fresh workbench: the commands that work now (no /approve, no /interrupt), typing and timeline keys."""
    app = build_app(RunOptions(workdir=project, model=MODEL))

    async def help_up(pilot: Pilot[int]) -> None:
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen) and "/plan" in screen_text(app), "the help")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=help_up)


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_completions_of_a_command(snap_compare: Snap, project: Path, size: tuple[int, int]) -> None:
    """/mo typed: /model and /mode offered above the input, the first highlighted."""
    app = build_app(RunOptions(workdir=project, model=MODEL))

    async def typed(pilot: Pilot[int]) -> None:
        await until(pilot, lambda: app.focused is app.query_one("#prompt"), "the input focused")
        app.query_one(Welcome).workspace = "~/project"  # the same in every picture
        await pilot.press("slash", "m", "o")
        await until(pilot, lambda: app.query_one(CompletionList).shown and "/mode" in screen_text(app), "completions")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=typed)
