"""The workbench shows the diff of an edit the model makes, in that tool call's view."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import entries, screen_text, send


@pytest.mark.usefixtures("model_env")
async def test_an_edit_shows_its_removed_and_added_lines(api: FakeAnthropic, tmp_path: Path) -> None:
    """An edit call's view shows the unified diff: "-" before the old line and "+" before the new one."""
    (tmp_path / "greet.py").write_text("def greet():\n    return 'old greeting'\n")
    api.script(
        message(
            tool_use("t1", "edit", {"path": "greet.py", "old": "'old greeting'", "new": "'new greeting'"}),
            stop_reason="tool_use",
        ),
        message(text("Changed it.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "change the greeting")
        await app.run_shown.wait()
        await pilot.pause()
        (call,) = entries(app, "tool")
        assert (call.name, call.status) == ("edit", "done")
        assert "greeting" not in call.output  # the diff is not in the text the model sees: only the view shows it
        assert not call.folded  # an edit opens on its diff
        lines = [row.strip() for row in screen_text(app).splitlines()]
        assert "-    return 'old greeting'" in lines
        assert "+    return 'new greeting'" in lines
        assert (tmp_path / "greet.py").read_text() == "def greet():\n    return 'new greeting'\n"
