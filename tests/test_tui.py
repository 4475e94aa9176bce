"""The workbench plays the demo on screen, end to end, under Textual's Pilot."""

from __future__ import annotations

from pathlib import Path

from chimera.core.launch import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.assistant_message import AssistantMessage
from chimera.tui.widgets.conversation import Conversation
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.tool_call_view import ToolCallView
from chimera.tui.widgets.user_message import UserMessage


def screen_text(app: object) -> str:
    """Everything the screen shows right now, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())  # type: ignore[attr-defined]


async def test_demo_final_answer_appears_on_screen(isolated_env: Path) -> None:
    """With no model configured, the app plays the demo and its final answer is on screen."""
    app = build_app(RunOptions(), demo_pace=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_shown.wait()
        await pilot.pause()
        conversation = app.query_one(Conversation)
        assert app.query_one("#demo-banner").visible
        assert "Demo mode" in screen_text(app)
        assert [m.text for m in conversation.query(UserMessage)] == [app.launch.demo_task]
        answers = list(conversation.query(AssistantMessage))
        assert all(a.finished for a in answers)
        assert answers[-1].text.startswith("All 3 tests pass now.")
        calls = list(conversation.query(ToolCallView))
        assert [c.tool_name for c in calls] == ["bash", "read", "read", "edit", "bash"]
        assert not any(c.is_error for c in calls)
        text = screen_text(app)
        assert "The fix is in stats.py; nothing else changed." in text
        status = app.query_one(StatusLine)
        assert (status.state, status.turn) == ("done", 5)
        assert "done" in text
        assert "turn 5" in text
        await pilot.press("ctrl+q")
    assert app.return_code == 0 or app.return_code is None


async def test_a_typed_task_runs_and_the_input_clears(isolated_env: Path) -> None:
    """Typing while idle starts a run (here: the demo's replay has no turns left, so it fails visibly)."""
    app = build_app(RunOptions(), demo_pace=0)
    async with app.run_test(size=(120, 40)) as pilot:
        await app.run_shown.wait()
        await pilot.pause()
        app.run_shown.clear()
        await pilot.click("#prompt")
        await pilot.press(*"again", "enter")
        await app.run_shown.wait()
        await pilot.pause()
        assert app.query_one("#prompt").value == ""  # type: ignore[attr-defined]
        users = [m.text for m in app.query_one(Conversation).query(UserMessage)]
        assert users[-1] == "again"
        assert "the run stopped (replay_exhausted)" in screen_text(app)
        assert app.query_one(StatusLine).state == "failed"
