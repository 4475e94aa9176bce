"""The workbench plays the demo on screen, end to end, under Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.demo import DEMO_NOTICE
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.demo_banner import DEMO_LINE, DemoBanner
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.status_line import StatusLine
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import entries, said, screen_text


async def test_demo_final_answer_appears_on_screen(isolated_env: Path) -> None:
    """With no model configured, the app plays the demo and its final answer is on screen."""
    app = build_app(RunOptions(), demo_pace=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_shown.wait()
        await pilot.pause()
        assert app.query_one("#demo-banner").visible
        assert "Demo mode" in screen_text(app)
        assert said(app) == [app.session.demo_task]
        answers = entries(app, "text")
        assert not any(a.streaming for a in answers)
        assert answers[-1].text.startswith("All 3 tests pass now.")
        calls = entries(app, "tool")
        assert [c.name for c in calls] == ["bash", "read", "read", "edit", "bash"]
        assert all(c.status == "done" for c in calls)
        text = screen_text(app)
        assert "The fix is in stats.py; nothing else changed." in text
        status = app.query_one(StatusLine)
        assert (status.state, status.turn) == ("done", 5)
        assert "done" in text
        assert "turn 5" in text
        await pilot.press("ctrl+q")
    assert app.return_code == 0


async def test_the_demo_banner_folds_to_one_line_once_the_demo_starts(isolated_env: Path) -> None:
    """At 80×24 the banner takes one line, shown whole (what the demo is and how to use a model); its whole
    notice opens in the conversation first, and a click on the banner opens it there too."""
    app = build_app(RunOptions(), demo_pace=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await app.run_shown.wait()
        await pilot.pause()
        banner = app.query_one(DemoBanner)
        assert banner.folded
        assert banner.size.height == 1
        top = screen_text(app).splitlines()[0]
        assert "…" not in top
        assert top.strip().endswith(DEMO_LINE)
        assert "Demo mode: a recorded session replays" in top
        assert "set ANTHROPIC_API_KEY to use a model" in top
        assert app.transcript.entries[0].text == DEMO_NOTICE
        await pilot.click("#demo-banner")
        await pilot.pause()
        assert not banner.folded
        assert banner.size.height > 1
        assert "(Ollama, llama.cpp, vLLM, LiteLLM)" in screen_text(app)


async def test_typing_a_task_in_the_demo_says_how_to_connect_a_model(isolated_env: Path) -> None:
    """After the demo, a typed task is not sent anywhere: a notice says how to connect a model."""
    app = build_app(RunOptions(), demo_pace=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_shown.wait()
        await pilot.pause()
        await pilot.click("#prompt")
        await pilot.press(*"again", "enter")
        await pilot.pause()
        assert app.query_one(PromptInput).value == ""
        assert said(app) == [app.session.demo_task]
        assert "ANTHROPIC_API_KEY" in screen_text(app)
        assert not app.running


@pytest.mark.usefixtures("model_env")
async def test_a_typed_task_runs_against_a_model_server(api: FakeAnthropic, tmp_path: Path) -> None:
    """With a model configured, a typed task streams its answer and tool call onto the screen."""
    api.script(
        message(text("Listing files."), tool_use("t1", "glob", {"pattern": "*.txt"}), stop_reason="tool_use"),
        message(text("There is **one** text file: `notes.txt`."), input_tokens=1500, output_tokens=40),
    )
    (tmp_path / "notes.txt").write_text("hi\n")
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        assert not app.query("#demo-banner")
        await pilot.click("#prompt")
        await pilot.press(*"which text files?", "enter")
        await app.run_shown.wait()
        await pilot.pause()
        assert said(app) == ["which text files?"]
        (call,) = entries(app, "tool")
        assert (call.name, call.output) == ("glob", "notes.txt\n")
        text_on_screen = screen_text(app)
        assert "There is one text file: notes.txt." in text_on_screen
        status = app.query_one(StatusLine)
        assert (status.state, status.model, status.turn) == ("done", "claude-sonnet-4-6", 2)
        assert status.input_tokens == 120 + 1500
        assert status.cost > 0
