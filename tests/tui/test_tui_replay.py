"""`chimera replay ID` in the workbench: the recorded run on screen as it looked, with pause, step and speed."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual.pilot import Pilot

from chimera.core.sessions import store as store_module
from chimera.core.sessions.store import SessionStore
from chimera.tui.replay_app import ReplayApp
from chimera.tui.widgets.replay_bar import ReplayBar
from chimera.tui.widgets.status_line import StatusLine
from tests.session_helpers import record_fixed_session
from tests.tui_helpers import entries, said, screen_text

TASK = "how long is a.txt?"
ANSWER = "a.txt has **three** lines."


def record_session(home: Path, workdir: Path, *, turn_seconds: float = 0.0) -> str:
    """A finished session: the task, a read of a.txt, its result, the answer; each answer took ``turn_seconds``."""
    clock = iter(range(0, 100))
    now = time.time()

    def recorded_time() -> float:
        return now + next(clock) * turn_seconds

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(store_module, "time", SimpleNamespace(time=recorded_time))
        with SessionStore.create(home, "r1", workdir=workdir, model="claude-sonnet-4-6") as store:
            store.add("user", {"role": "user", "content": TASK})
            store.add(
                "assistant",
                {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": "Reading it now."},
                        {"type": "tool_use", "id": "c1", "name": "read", "input": {"path": "a.txt"}},
                    ],
                },
            )
            result = {
                "type": "tool_result",
                "tool_use_id": "c1",
                "content": "     1  one\n     2  two\n     3  three\n",
            }
            store.add("tool_result", {"role": "user", "content": [result]})
            store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": ANSWER}]})
            store.sync()
    return "r1"


async def until(pilot: Pilot[int], condition: Callable[[], bool], what: str) -> None:
    """Let the app run until ``condition`` holds (or fail after a generous deadline)."""
    deadline = time.monotonic() + 20
    while not condition():
        assert time.monotonic() < deadline, f"never happened: {what}"
        await pilot.pause()


async def test_a_replay_shows_the_run_as_it_looked_and_says_how_it_ended(isolated_env: Path, tmp_path: Path) -> None:
    """The replay draws the person's task, the folded read, the answer, and ends in the headless replay's words."""
    session = record_session(isolated_env, tmp_path)
    app = ReplayApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.ended, "the replay ended")
        assert said(app) == [TASK]
        (read,) = entries(app, "tool")
        assert (read.name, read.status, read.folded) == ("read", "done", True)
        assert [e.text for e in entries(app, "text")] == ["Reading it now.", ANSWER]
        assert entries(app, "notice")[-1].text == "replay completed: 1 run"
        text = screen_text(app)
        assert "▸ ✓ read  a.txt" in text
        assert "a.txt has three lines." in text
        assert "■ ended" in text
        assert app.query_one(StatusLine).state == "done"
        await pilot.press("up", "up", "up", "up", "enter")  # the same timeline: its cursor unfolds the read
        await pilot.pause()
        assert not read.folded
        assert "3  three" in screen_text(app)


async def test_a_paused_replay_steps_one_turn_at_a_time(isolated_env: Path, tmp_path: Path) -> None:
    """Started paused, only the task shows; s plays one turn (its call and result), p plays the rest."""
    session = record_session(isolated_env, tmp_path)
    app = ReplayApp(session, paused=True)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: said(app) == [TASK], "the task shown")
        for _ in range(5):
            await pilot.pause()
        assert entries(app, "text") == []
        assert "⏸ paused" in screen_text(app)
        await pilot.press("s")
        await until(pilot, lambda: [c.status for c in entries(app, "tool")] == ["done"], "the first turn played")
        for _ in range(5):
            await pilot.pause()
        assert [e.text for e in entries(app, "text")] == ["Reading it now."]  # the answer waits for the next step
        assert not app.ended
        await pilot.press("p")
        await until(pilot, lambda: app.ended, "the replay ended")
        assert [e.text for e in entries(app, "text")] == ["Reading it now.", ANSWER]


async def test_the_speed_keys_change_a_replay_mid_turn(isolated_env: Path, tmp_path: Path) -> None:
    """Turns recorded as ten minutes long play at 1×; 3 (instant) plays the rest at once."""
    session = record_session(isolated_env, tmp_path, turn_seconds=600)
    app = ReplayApp(session)
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: bool(entries(app, "text")), "the first word streamed")
        assert entries(app, "text")[0].text == "Reading "
        assert "▶ playing · 1×" in screen_text(app)
        await pilot.press("3")
        await until(pilot, lambda: app.ended, "the replay ended")
        assert app.query_one(ReplayBar).speed == float("inf")
        assert [e.text for e in entries(app, "text")] == ["Reading it now.", ANSWER]


async def test_a_replay_shows_recorded_durations_and_an_edits_diff(isolated_env: Path, tmp_path: Path) -> None:
    """The session's log gives the replayed calls their time then and their data: the edit opens on its diff."""
    app = ReplayApp(record_fixed_session(isolated_env, tmp_path), paused=True)
    async with app.run_test(size=(100, 40)) as pilot:
        await until(pilot, lambda: bool(said(app)), "the task")
        app.clock.speed = float("inf")
        await pilot.press("p")
        await until(pilot, lambda: app.ended, "the replay ended")
        read, test_run, edit = entries(app, "tool")
        assert [c.duration_ms for c in (read, test_run, edit)] == [3.0, 840.0, 12.0]
        assert edit.data["diff"].startswith("--- a/stats.py")
        assert not edit.folded
        text = screen_text(app)
        assert "✗ bash  pytest -q · 0.84s" in text
        assert "+    return (ordered[mid - 1] + ordered[mid]) / 2" in text
