"""A cut tool result's whole saved output opens in a scrollable viewer (`o` on the call), and only from the
session's own output folder."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from textual.app import App, ComposeResult

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.screens.output import OutputScreen, saved_output
from chimera.tui.widgets.saved_output_view import SavedOutputView
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import burst, entries, screen_text, send, until


@pytest.fixture
def output_cap(model_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The model environment with tool output cut at 2,000 characters, set here and returned for a child."""
    monkeypatch.setenv("CHIMERA_MAX_TOOL_OUTPUT", "2000")
    return {**model_env, "CHIMERA_MAX_TOOL_OUTPUT": "2000"}


@pytest.mark.usefixtures("output_cap")
async def test_o_on_a_cut_call_opens_its_whole_output(api: FakeAnthropic, tmp_path: Path) -> None:
    """The model saw a head and a tail; `o` on the call shows all 3,000 lines, End reaches the last, escape closes."""
    api.script(
        message(tool_use("t1", "bash", {"command": "seq 1 3000"}), stop_reason="tool_use"),
        message(text("Counted.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", allow=("bash(seq *)",)))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "count")
        await app.run_shown.wait()
        (call,) = entries(app, "tool")
        assert "lines truncated" in call.output
        await pilot.press("tab", "up", "up", "up", "o")  # the notice, the answer, then the call
        await until(pilot, lambda: isinstance(app.screen, OutputScreen), "the output viewer")
        view = app.screen.query_one(SavedOutputView)
        await until(pilot, lambda: view.indexed, "the saved output indexed")
        assert view.line_count == 3000
        shown = screen_text(app)
        assert "seq 1 3000" in shown
        rows = [row.strip() for row in shown.splitlines()]
        assert "1" in rows
        assert "500" not in rows
        await pilot.press("end")
        await until(pilot, lambda: "2999" in [r.strip() for r in screen_text(app).splitlines()], "the last lines")
        assert screen_text(app).splitlines()[-2].strip() == "3000"  # the title says 3000 too: the row itself
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, OutputScreen), "the viewer closed")


@pytest.mark.usefixtures("output_cap")
async def test_keys_typed_in_one_instant_with_o_reach_the_output_viewer(api: FakeAnthropic, tmp_path: Path) -> None:
    """``o`` and ``end`` typed in one instant on a cut call: the viewer opens and takes the end (it shows the last
    line); none of them is left to the timeline under it."""
    api.script(
        message(tool_use("t1", "bash", {"command": "seq 1 3000"}), stop_reason="tool_use"),
        message(text("Counted.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", allow=("bash(seq *)",)))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "count")
        await app.run_shown.wait()
        await pilot.press("tab", "up", "up", "up")  # the notice, the answer, then the call
        burst(app, ["o", "end"])
        await until(pilot, lambda: isinstance(app.screen, OutputScreen), "the output viewer")
        view = app.screen.query_one(SavedOutputView)
        await until(pilot, lambda: view.indexed, "the saved output indexed")
        await until(pilot, lambda: "2999" in [r.strip() for r in screen_text(app).splitlines()], "the last lines")


class Viewer(App[None]):
    def __init__(self, path: Path) -> None:
        super().__init__()
        self.path = path

    def compose(self) -> ComposeResult:
        yield SavedOutputView(self.path)


async def test_a_big_output_shows_its_first_screen_and_every_line_inert(tmp_path: Path) -> None:
    """200,000 lines are indexed in blocks; escapes in the output are shown, not obeyed; no newline at the end
    still counts the last line."""
    saved = tmp_path / "out.txt"
    body = "".join(f"line {n}\n" for n in range(1, 200_000))
    saved.write_text("\x1b]0;pwned\x07title \x1b[31mred\n" + body + "the end, unterminated")
    app = Viewer(saved)
    async with app.run_test(size=(60, 10)) as pilot:
        view = app.query_one(SavedOutputView)
        await until(pilot, lambda: view.indexed, "indexed")
        assert view.line_count == 200_001
        first = screen_text(app)
        assert "\x1b" not in first
        assert "title" in first
        assert "line 1" in first
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        assert "the end, unterminated" in screen_text(app)


def test_only_a_regular_file_in_the_sessions_output_folder_is_opened(tmp_path: Path) -> None:
    """A crafted session can name any path: outside the folder, through a link, a folder, or nothing at all."""
    folder = tmp_path / "output"
    folder.mkdir()
    good = folder / "t1.txt"
    good.write_text("ok\n")
    secret = tmp_path / "secret.txt"
    secret.write_text("key\n")
    (folder / "link.txt").symlink_to(secret)
    (folder / "inner").mkdir()
    os.symlink(folder / "t1.txt", folder / "inner-link.txt")
    assert saved_output(good, folder)[1] == ""
    for path in (
        secret,
        folder / "link.txt",
        folder / "inner",
        folder / ".." / "secret.txt",
        folder / "inner-link.txt",
    ):
        assert saved_output(path, folder)[1].startswith("Not opened:"), path
    assert "gone" in saved_output(folder / "missing.txt", folder)[1]
    assert "replay" in saved_output(good, None)[1]
