"""The first screen: a new session (not a resume, not the demo) welcomes with the workspace, the model, the
strategy, the mode and the keys and commands to know; the first task sent takes its place."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.welcome import Welcome
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.session_helpers import record_fixed_session
from tests.tui_helpers import said, screen_text, send, until

Snap = Callable[..., bool]
SIZES = [(80, 24), (120, 40)]


@pytest.mark.usefixtures("model_env")
async def test_a_new_session_is_welcomed_until_its_first_task(api: FakeAnthropic, project: Path) -> None:
    """The welcome names the workspace, model, strategy and mode and the keys and commands; the first task
    replaces it with the conversation."""
    api.script(message(text("Hi there.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, loop="reflexion", permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = screen_text(app)
        assert "Welcome to Chimera" in shown
        assert str(project) in shown
        assert f"model {MODEL} · strategy reflexion · mode bypass" in shown
        for hint in (
            "enter send",
            "ctrl+q quit",
            "?/F1 keys and commands",
            "/plan TASK   plan TASK first",
            "/loop NAME",
        ):
            assert hint in shown
        await send(pilot, "hello")
        await app.run_shown.wait()
        await until(pilot, lambda: "Hi there." in screen_text(app), "the answer")
        assert not app.query(Welcome)
        assert "Welcome to Chimera" not in screen_text(app)
        assert said(app) == ["hello"]


@pytest.mark.usefixtures("model_env")
async def test_a_new_session_from_new_is_welcomed_again(api: FakeAnthropic, project: Path) -> None:
    """/new after a task: the welcome is back above the empty conversation, with the session's choices."""
    api.script(message(text("Hi there.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, loop="reflexion", permission_mode="bypass"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hello")
        await app.run_shown.wait()
        await until(pilot, lambda: not app.query(Welcome), "the welcome gone")
        await send(pilot, "/new")
        await until(pilot, lambda: "Welcome to Chimera" in screen_text(app), "the welcome again")
        assert "strategy reflexion · mode bypass" in screen_text(app)
        assert "Hi there." not in screen_text(app)


@pytest.mark.usefixtures("model_env")
async def test_a_resumed_session_has_no_welcome(api: FakeAnthropic, isolated_env: Path, tmp_path: Path) -> None:
    """A resumed session shows its history, not a welcome."""
    session = record_fixed_session(isolated_env, tmp_path)
    resumed = build_app(RunOptions(resume=session, model=MODEL))
    async with resumed.run_test(size=(80, 24)) as pilot:
        await resumed.history_shown.wait()
        await pilot.pause()
        assert not resumed.query(Welcome)


async def test_the_demo_has_no_welcome(isolated_env: Path) -> None:
    """The demo plays at once: no welcome."""
    demo = build_app(RunOptions(), demo_pace=0)
    async with demo.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not demo.query(Welcome)
        await demo.run_shown.wait()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.usefixtures("model_env")
def test_the_welcome(snap_compare: Snap, project: Path, size: tuple[int, int]) -> None:
    """The first screen of a new session: the welcome, the input, the status line and the footer."""
    app = build_app(RunOptions(workdir=project, model=MODEL))

    async def shown(pilot: Pilot[int]) -> None:
        await pilot.pause()
        app.query_one(Welcome).workspace = "~/project"  # the same in every picture
        app.conversation.show_status(workspace="~/project")
        await until(pilot, lambda: "~/project" in screen_text(app), "the welcome")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=shown)
