"""Screen snapshots at 80×24 (pytest-textual-snapshot): each state of the workbench as a person sees it.

The SVGs live in ``tests/tui/__snapshots__/test_snapshots/``; a change to how a screen
looks fails here until the new picture is looked at and accepted with
``pytest tests/tui/test_snapshots.py -n 0 --snapshot-update``. What the screens show is
made fixed first: a session recorded by hand (durations, a diff and the run's
end in its event log), a model server that always answers the same.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.replay_app import ReplayApp
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, tool_use
from tests.session_helpers import record_fixed_session
from tests.tui_helpers import answering, entries, pictured, screen_text, send, still, until

SIZE = (80, 24)
Snap = Callable[..., bool]


def asked_about(app: App[int], screen: type[Screen[object]], words: str) -> bool:
    """Whether ``screen`` is up and drawn with ``words`` on it (pushed comes a frame before drawn)."""
    return isinstance(app.screen, screen) and words in screen_text(app)


@pytest.mark.usefixtures("model_env")
def test_a_resumed_session_folded(snap_compare: Snap, api: FakeAnthropic, isolated_env: Path, tmp_path: Path) -> None:
    """Thinking and the read folded to their lines, the failed test run and the edit's diff open."""
    session = record_fixed_session(isolated_env, tmp_path)
    app = build_app(RunOptions(resume=session, model=MODEL))

    async def shown(pilot: Pilot[int]) -> None:
        await app.history_shown.wait()
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=shown)


@pytest.mark.usefixtures("model_env")
def test_a_resumed_session_with_the_read_unfolded(
    snap_compare: Snap, api: FakeAnthropic, isolated_env: Path, tmp_path: Path
) -> None:
    """The cursor on the read (tab reaches the timeline, z folds all, arrows move), enter unfolds it."""
    session = record_fixed_session(isolated_env, tmp_path)
    app = build_app(RunOptions(resume=session, model=MODEL))

    async def unfold_the_read(pilot: Pilot[int]) -> None:
        await app.history_shown.wait()
        await pilot.press("tab", "z")
        read = next(i for i, e in enumerate(app.transcript.entries) if e.name == "read")
        while app.query_one("#conversation").cursor != read:  # type: ignore[attr-defined]
            await pilot.press("up")
        await pilot.press("enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=unfold_the_read)


def test_a_replay_paused_after_one_step(snap_compare: Snap, isolated_env: Path, tmp_path: Path) -> None:
    session = record_fixed_session(isolated_env, tmp_path)
    app = ReplayApp(session, paused=True)

    async def one_step(pilot: Pilot[int]) -> None:
        await until(pilot, lambda: bool(entries(app, "user")), "the task")
        await pilot.press("s")
        await until(pilot, lambda: [c.status for c in entries(app, "tool")] == ["done", "failed"], "one turn")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=one_step)


@pytest.mark.usefixtures("model_env")
def test_the_permission_prompt(snap_compare: Snap, api: FakeAnthropic, tmp_path: Path) -> None:
    api.script(message(tool_use("t1", "bash", {"command": "make clean"}), stop_reason="tool_use"))
    app = still(build_app(RunOptions(workdir=tmp_path, model=MODEL)))

    async def asked(pilot: Pilot[int]) -> None:
        await pilot.pause()  # laid out: the click lands on the input
        await send(pilot, "clean the build")
        await answering(pilot, app)
        await until(pilot, lambda: "y once · a always" in screen_text(app), "the question's keys")
        await pictured(pilot, app)

    assert snap_compare(app, terminal_size=SIZE, run_before=asked)


@pytest.mark.usefixtures("model_env")
def test_the_whole_output_of_a_call(
    snap_compare: Snap, api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`o` on the test run opens what it saved; the file is named from ~ (here the test's home folder)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    home = tmp_path / "chimera"
    monkeypatch.setenv("CHIMERA_HOME", str(home))
    workdir = tmp_path / "project"
    workdir.mkdir()
    session = record_fixed_session(home, workdir)
    app = build_app(RunOptions(resume=session, model=MODEL))

    async def open_it(pilot: Pilot[int]) -> None:
        await app.history_shown.wait()
        await pilot.press("tab")
        bash = next(i for i, e in enumerate(app.transcript.entries) if e.name == "bash")
        while app.query_one("#conversation").cursor != bash:  # type: ignore[attr-defined]
            await pilot.press("up")
        await pilot.press("o")
        await until(pilot, lambda: "line 20" in screen_text(app), "the saved output")

    assert snap_compare(app, terminal_size=SIZE, run_before=open_it)
