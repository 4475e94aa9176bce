"""MCP servers in the workbench (Pilot, the reference server): they start after the first frame, the status line
counts them, a server that failed is one notice, the ``/mcp`` panel lists them with their tools, context and logs
(names and errors drawn as they are) and reconnects, disables and enables them; a workspace's ``.mcp.json``
starts nothing until ``/mcp trust``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.screens.help import HelpScreen
from chimera.tui.screens.mcp import McpScreen
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.mcp_helpers import everything_server
from tests.tui_helpers import entries, in_palette, screen_text, send, toasts, until

pytestmark = pytest.mark.usefixtures("model_env")


def notes(app: object) -> list[str]:
    """The workbench's own notices in the conversation."""
    return [entry.text for entry in entries(app, "notice")]


def servers_file(folder: Path, **servers: dict[str, object]) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


async def test_servers_start_after_the_first_frame_and_are_counted_listed_and_used(
    api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    """``mcp 1/2`` once both have started or failed; the broken one is a notice; the ``/mcp`` panel lists the
    good one with its transport, tools and context and the broken one with its error, the broken one's name
    drawn literally, and shows the chosen one in full (its log); ``d`` there takes a server's tools away and
    brings them back, ``r`` starts it again; the help lists them, the palette lists each one's actions; a call of
    the good one's tool runs and its result reaches the model."""
    config = servers_file(
        tmp_path,
        everything={"command": str(everything_server()), "args": ["stdio"]},
        **{"[b]broken[/b]": {"command": "/nowhere/mcp-server"}},
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass", mcp_config=config))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.state.status.mcp == "mcp 1/2", "the servers counted")
        await until(pilot, lambda: "MCP server [b]broken[/b] failed" in toasts(app), "the failure said")
        await send(pilot, "/mcp")
        await until(pilot, lambda: isinstance(app.screen, McpScreen), "the panel")
        await until(pilot, lambda: "1 of 2 ready" in screen_text(app), "the servers listed")
        shown = screen_text(app)
        assert re.search(r"everything +ready +stdio +1[34] tools · ~[\d.]+k tokens", shown)
        assert re.search(r"\[b\]broken\[/b\] +failed +stdio", shown)  # drawn as it is, never as markup
        assert "mcp-everything.log" in shown  # the chosen one in full: its log, its tools
        assert "get-tiny-image" in shown
        await pilot.press("down")
        await until(pilot, lambda: "/nowhere/mcp-server" in screen_text(app), "the broken one in full")
        assert re.search(r"error +.*/nowhere/mcp-server", screen_text(app))
        await pilot.press("up", "d")
        await until(pilot, lambda: app.state.status.mcp == "mcp 0/1", "the server disabled")
        await until(pilot, lambda: re.search(r"everything +disabled", screen_text(app)) is not None, "shown off")
        assert not any(t.name.startswith("mcp__everything__") for t in app.session.agent.tools)
        await pilot.press("d")
        await until(pilot, lambda: app.state.status.mcp == "mcp 1/2", "the server enabled again")
        await pilot.press("r")
        await until(pilot, lambda: "MCP server everything: ready." in notes(app)[-1], "started again")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, McpScreen), "the panel closed")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        assert isinstance(app.screen, HelpScreen)
        listed = dict(app.screen.sections)["MCP servers (/mcp)"]
        assert any(usage == "mcp__everything" and "everything: 1" in words for _, usage, words in listed)
        await pilot.press("escape")
        await in_palette(pilot, app, "disable everything", "MCP servers: disable everything")  # each listed
        await until(pilot, lambda: app.state.status.mcp == "mcp 0/1", "disabled from the palette")
        await send(pilot, "/mcp enable everything")
        await until(pilot, lambda: app.state.status.mcp == "mcp 1/2", "enabled by its command")
        api.script(
            message(tool_use("e1", "mcp__everything__echo", {"message": "hi"}), stop_reason="tool_use"),
            message(text("Echoed.")),
        )
        await send(pilot, "echo hi")
        await app.run_shown.wait()
        assert "Echo: hi" in str(api.requests[-1].messages[-1])
        assert 'mcp__everything__echo  message="hi" · ' in screen_text(app)  # its arguments on its line


async def test_a_workspaces_mcp_json_waits_for_trust(api: FakeAnthropic, project: Path, isolated_env: Path) -> None:
    """The file's servers are named in a notice and none starts; the panel says the file waits; ``t`` there shows
    the command each would run and a second ``t`` starts them (any other key between takes the question back), the
    count and the panel say so; the next workbench over the same file starts them unasked."""
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": {"command": str(everything_server())}}}))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: "/mcp trust starts them" in toasts(app), "the question")
        assert "tracker (" in toasts(app)
        assert app.state.status.mcp == ""
        await send(pilot, "/mcp")
        await until(pilot, lambda: "waits for a yes (t starts them): tracker" in screen_text(app), "it waits")
        await pilot.press("t")
        await until(pilot, lambda: "t again starts them, running tracker: " in screen_text(app), "what it runs")
        assert str(everything_server()) in screen_text(app).replace("\n", "")
        await pilot.press("x", "t")  # a t typed among other keys starts nothing
        assert "t again starts them" in screen_text(app)  # asked afresh
        assert not any("Starting the MCP servers" in line for line in notes(app))
        await pilot.press("t")
        await until(pilot, lambda: app.state.status.mcp == "mcp 1/1", "the server started")
        await until(pilot, lambda: re.search(r"tracker +ready", screen_text(app)) is not None, "listed ready")
        assert any("Starting the MCP servers of .mcp.json: tracker." in line for line in notes(app))
    again = build_app(RunOptions(workdir=project, model=MODEL))
    async with again.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: again.state.status.mcp == "mcp 1/1", "started unasked")
        assert "/mcp trust" not in toasts(again)
