"""Snapshots (pytest-textual-snapshot) of the ``/mcp`` panel at 80×24 and 120×40: the reference server ready
with its tools and the context they cost, a server that failed with its error, the chosen one in full, and the
keys. The paths that differ between machines (the server's command, its log) are shown by fixed names. Accept a
deliberate change with ``pytest tests/tui/test_mcp_snapshots.py -n 0 --snapshot-update`` after looking."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.screens.mcp import McpScreen
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.mcp_helpers import everything_server
from tests.tui_helpers import screen_text, send, toasts, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_mcp_panel(snap_compare: Snap, project: Path, tmp_path: Path, size: tuple[int, int]) -> None:
    """Both servers listed with state and transport, the ready one's tools and tokens, its details below, and
    every key the panel takes on screen at 80×24."""
    config = tmp_path / "mcp.json"
    servers = {"everything": {"command": str(everything_server()), "args": ["stdio"]}, "tracker": {"command": "/no"}}
    config.write_text(json.dumps({"mcpServers": servers}))
    app = build_app(RunOptions(workdir=project, model=MODEL, mcp_config=config))

    async def opened(pilot: Pilot[int]) -> None:
        await until(pilot, lambda: app.state.status.mcp == "mcp 1/2", "the servers started")
        app.conversation.show_status(session="5e55102d", workspace="~/project")
        for connection in app.session.mcp.connections if app.session.mcp else ():  # the same on every machine
            connection.log = Path(f"~/.local/share/chimera/output/5e55102d/mcp-{connection.name}.log")
            if connection.name == "everything":
                connection.config = replace(connection.config, command="mcp-server-everything")
        await until(pilot, lambda: "MCP server tracker failed" in toasts(app), "the failure said")
        await send(pilot, "/mcp")
        await until(pilot, lambda: isinstance(app.screen, McpScreen), "the panel")
        await until(pilot, lambda: "1 of 2 ready" in screen_text(app), "listed")
        app.clear_notifications()  # the failure's toast, said already: cleared over the panel, which shows it too
        await pilot.pause()
        assert all(key in screen_text(app) for key in ("r reconnect", "d disable or enable", "esc close"))

    assert snap_compare(app, terminal_size=size, run_before=opened)
