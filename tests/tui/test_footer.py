"""The footer: one line naming the keys that work now (from the command registry), most useful first, cut
whole at narrow widths, and changing as a run starts and ends."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.commands import Facts
from chimera.tui.footer_hints import fit, hints
from chimera.tui.state import WorkbenchState
from chimera.tui.widgets.key_footer import KeyFooter
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import asked, screen_text, send, until


def test_between_runs_enter_sends_and_there_is_nothing_to_interrupt() -> None:
    """Idle: enter sends, ctrl+q quits, ?/F1 shows the keys; esc (interrupt) is not offered."""
    assert hints(Facts(WorkbenchState())) == [("enter", "send"), ("ctrl+q", "Quit"), ("?/F1", "Keys and commands")]


def test_while_running_esc_interrupts_first_and_tab_queues() -> None:
    """A run working: esc interrupts comes first, then enter steers and tab queues the next task."""
    shown = hints(Facts(WorkbenchState(), running=True))
    assert shown[:3] == [("esc", "Interrupt"), ("enter", "steer"), ("tab", "queue next")]
    assert ("ctrl+q", "Quit") in shown


def test_a_narrow_footer_keeps_the_first_hints_whole() -> None:
    """Too narrow for all of them, the last hints are left out whole, never cut mid-word."""
    shown = hints(Facts(WorkbenchState(), running=True))
    assert fit(shown, 200) == shown
    assert fit(shown, 30) == [("esc", "Interrupt"), ("enter", "steer")]
    assert fit(shown, 3) == []


@pytest.mark.usefixtures("model_env")
async def test_the_footer_shows_the_keys_that_work_now(api: FakeAnthropic, project: Path) -> None:
    """On screen the footer says enter sends; while a run waits on a question it offers esc to interrupt; with
    the focus on the question it shows the question's own keys; once the run is over esc is gone again."""
    api.script(message(tool_use("t1", "bash", {"command": "touch x"}), stop_reason="tool_use"), message(text("Ok.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        footer = app.query_one(KeyFooter)
        last = screen_text(app).splitlines()[-1]
        assert "enter send" in last
        assert "ctrl+q quit" in last
        assert "esc" not in last
        await send(pilot, "make x")
        await until(pilot, lambda: len(app.state.questions) == 1, "the question")
        await until(pilot, lambda: str(footer.render()).startswith("esc interrupt  enter steer  tab queue next"), "")
        await asked(pilot, app)
        assert str(footer.render()).startswith("y once  a always…  e edit rule  n no")
        await pilot.press("y")
        await app.run_shown.wait()
        await until(pilot, lambda: "esc" not in screen_text(app).splitlines()[-1], "the footer without esc")
        assert "enter send" in screen_text(app).splitlines()[-1]
