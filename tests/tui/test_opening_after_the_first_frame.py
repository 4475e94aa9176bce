"""The ``chimera`` command's workbench draws its first frame before its session is open, then opens it: nothing
typed meanwhile is lost or misread, ctrl+q quits at once, and an error opening the session ends it with the error.

Each test holds the session's opening (in its thread) until the test lets it go, as a slow disk or a cold
cache would, and acts on the first frame meanwhile.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from textual import events

from chimera.core.errors import ConfigError
from chimera.core.sessions import start
from chimera.core.sessions.opening import Opening
from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.workspace_lock import LockWait, WorkspaceLock
from chimera.tui.app import build_app
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.welcome import Welcome
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.interrupt_helpers import PROMPT
from tests.lock_helpers import holding, named
from tests.tui_helpers import said, screen_text, send, toasts, until


class Gate:
    """The session's opening, held in its thread until ``release``; ``fail`` makes it raise instead."""

    def __init__(self) -> None:
        self.open = threading.Event()
        self.error: Exception | None = None

    def release(self, error: Exception | None = None) -> None:
        self.error = error
        self.open.set()


@pytest.fixture
def gate(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gate]:
    held = Gate()
    real: Callable[[RunOptions, Opening, LockWait | None], object] = start.start_session

    def waiting(options: RunOptions, opened: Opening, lock_wait: LockWait | None = None) -> object:
        held.open.wait(timeout=30)
        if held.error is not None:
            raise held.error
        return real(options, opened, lock_wait)

    monkeypatch.setattr(start, "start_session", waiting)
    yield held
    held.open.set()  # (a test that failed early leaves no thread waiting)


def flat(app: object) -> str:
    """The screen's text as one line of words (a long path wraps a line anywhere)."""
    return " ".join(screen_text(app).split())


def _app(project: Path, **options: object):  # type: ignore[no-untyped-def]
    return build_app(RunOptions(workdir=project, model=MODEL, **options), open_later=True)  # type: ignore[arg-type]


@pytest.mark.usefixtures("model_env")
async def test_the_first_frame_shows_the_welcome_status_and_input_before_the_session_is_open(
    gate: Gate, project: Path
) -> None:
    """Before the session is open the screen already shows the welcome, the status line's model, strategy and
    mode, and the input, focused; once open, the conversation and the tree panel are there too."""
    app = _app(project, loop="reflexion", permission_mode="accept-edits")
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        shown = screen_text(app)
        assert not app.is_open
        assert "Welcome to Chimera" in shown
        assert f"model {MODEL} · strategy reflexion · mode accept-edits" in shown
        assert app.focused is not None
        assert app.focused.id == "prompt"
        gate.release()
        await app.opened.wait()
        await pilot.pause()
        assert app.query("#conversation")
        assert app.query("#tree")
        assert app.session.loop_name == "reflexion"
        assert app.session.policy.mode == "accept-edits"
        assert app.query(Welcome)


@pytest.mark.usefixtures("model_env")
async def test_a_task_sent_while_the_session_opens_is_sent_once_it_is_and_typing_goes_on(
    api: FakeAnthropic, gate: Gate, project: Path
) -> None:
    """Enter before the session is open: the words leave the input and are sent, once, as the first task when
    it opens; what is typed after them stays in the input, unsent."""
    api.script(message(text("Hi there.")))
    app = _app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "hello")
        await pilot.press(*"and more")
        assert not app.is_open
        assert "as soon as the session is open" in toasts(app)
        assert app.query_one("#prompt").value == "and more"  # type: ignore[attr-defined]
        gate.release()
        await app.opened.wait()
        await until(pilot, lambda: "Hi there." in screen_text(app), "the answer to the task sent early")
        await app.run_shown.wait()
        assert said(app) == ["hello"]
        assert app.query_one("#prompt").value == "and more"  # type: ignore[attr-defined]
    assert len(api.requests) == 1


@pytest.mark.usefixtures("model_env")
async def test_a_command_sent_while_the_session_opens_runs_once_it_is(gate: Gate, project: Path) -> None:
    """``/mode bypass`` sent before the session is open chooses the mode once it is."""
    app = _app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "/mode bypass")
        assert not app.is_open
        gate.release()
        await app.opened.wait()
        await until(pilot, lambda: app.session.policy.mode == "bypass", "the mode chosen")
        await until(pilot, lambda: "permission mode bypass" in toasts(app), "the choice said")


@pytest.mark.usefixtures("model_env")
async def test_ctrl_q_while_the_session_opens_quits_and_closes_the_session(
    gate: Gate, isolated_env: Path, project: Path
) -> None:
    """ctrl+q before the session is open ends the workbench; the session, once open, is closed (its workspace
    lock let go) and nothing is left behind."""
    app = _app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+q")
        gate.release()
    assert app.return_code in (None, 0)
    assert app.open_error is None
    assert app.resume_next is None  # (what the command reads once the workbench is closed)
    assert app.resume_hint() == ""
    WorkspaceLock(isolated_env, project).exclusive().release()  # nobody holds it: the session closed
    assert not (isolated_env / "sessions").exists() or not any((isolated_env / "sessions").iterdir())


@pytest.mark.usefixtures("model_env")
async def test_a_workspace_another_process_holds_is_waited_for_on_screen_naming_the_holder(project: Path) -> None:
    """While another process holds the workspace's lock, the workbench says it waits for it and names the
    holder (pid and command); once the holder lets go, the line goes and the session opens there."""
    app = _app(project)
    with holding(project) as holder:
        async with app.run_test(size=(120, 30)) as pilot:
            await until(pilot, lambda: "another process holds it" in flat(app), "the wait shown")
            shown = flat(app)
            assert f"Waiting for {project}: another process holds it ({named(holder)}" in shown
            assert not app.is_open
            holder.communicate("")  # it lets go
            await app.opened.wait()
            await pilot.pause()
            assert "another process holds it" not in flat(app)
            assert app.session.env.workdir == project


@pytest.mark.usefixtures("model_env")
async def test_ctrl_q_while_waiting_for_a_held_workspace_quits_at_once(isolated_env: Path, project: Path) -> None:
    """ctrl+q while the workbench waits for a workspace another process holds quits at once, not when the
    wait gives up; no session is left behind."""
    app = _app(project)
    with holding(project):
        async with app.run_test(size=(80, 24)) as pilot:
            await until(pilot, lambda: "another process holds it" in flat(app), "the wait shown")
            pressed = time.monotonic()
            await pilot.press("ctrl+q")
        took = time.monotonic() - pressed
    assert took < PROMPT
    assert app.open_error is None
    assert not any((isolated_env / "sessions").glob("*"))


@pytest.mark.usefixtures("model_env")
async def test_an_error_opening_the_session_ends_the_workbench_with_it(gate: Gate, project: Path) -> None:
    """A session that cannot open ends the workbench with the error kept for the command to say (one line)."""
    app = _app(project)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        gate.release(ConfigError("cannot use /x for Chimera's state: set CHIMERA_HOME to a folder you own"))
        await until(pilot, lambda: app.open_error is not None, "the error kept")
    assert isinstance(app.open_error, ConfigError)
    assert app.return_code == 1


@pytest.mark.parametrize("open_later", [True, False], ids=["while-opening", "open"])
@pytest.mark.usefixtures("model_env")
async def test_keys_typed_behind_enter_in_one_burst_stay_in_the_input(
    api: FakeAnthropic, gate: Gate, project: Path, open_later: bool
) -> None:
    """Keys that come in one burst (a busy moment, such as the session opening, lets them pile up): what was
    typed before enter is sent, and what was typed after it stays in the input, not joined to what is sent."""
    api.script(message(text("Hi there.")))
    app = build_app(RunOptions(workdir=project, model=MODEL), open_later=open_later)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        for character in "hello\rmore":  # as the driver posts them when they arrive together
            app.post_message(events.Key("enter", None) if character == "\r" else events.Key(character, character))
        await until(pilot, lambda: app.query_one(PromptInput).value == "more", "the keys behind enter in the input")
        gate.release()
        await until(pilot, lambda: "Hi there." in screen_text(app), "the answer")
        await app.run_shown.wait()
        assert said(app) == ["hello"]
        assert app.query_one(PromptInput).value == "more"
