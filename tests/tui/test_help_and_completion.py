"""Help and completion in the workbench: ``?``, F1 and ``/help`` list the keys and commands that work now;
typing ``/`` offers the commands that work, the exact name first, and ``tab`` takes one; ``tab`` on words
still queues them; an unknown or unavailable command answers in one line and sends nothing to the model."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.screens.help import HelpScreen
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.prompt_input import PromptInput
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import entries, said, screen_text, send, toasts, until


def waiting_command() -> object:
    """A reply that runs a command which waits until ``go.fifo`` is written."""
    return message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use")


def help_shown(app: object) -> str:
    return screen_text(app) if isinstance(app.screen, HelpScreen) else ""  # type: ignore[attr-defined]


@pytest.mark.parametrize("way", ["?", "f1", "/help"])
@pytest.mark.usefixtures("model_env")
async def test_help_lists_only_the_commands_that_work_now(api: FakeAnthropic, project: Path, way: str) -> None:
    """? (in the empty input), F1 and /help open the same help: commands that work now with their keys, the
    typing keys and the timeline's; /approve (no plan waits) and /interrupt (nothing runs) are not in it."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        if way == "/help":
            await send(pilot, "/help")
        else:
            await pilot.press(way)
        await until(pilot, lambda: "Keys and commands that work now" in help_shown(app), "the help")
        shown = help_shown(app)
        for listed in (
            "/help",
            "/plan TASK",
            "/loop NAME",
            "/compact [focus]",
            "/new",
            "ctrl+q",
            "?/F1",
            "Fold/unfold",
        ):
            assert listed in shown, listed
        for absent in ("/approve", "/interrupt", "/replay"):  # nothing to approve, stop or replay yet
            assert absent not in shown, absent
        assert "start with // to send words that begin with a slash" in shown.lower()
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help to close")
        assert app.query_one(PromptInput).value == ""  # the ? was never typed
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_help_while_a_run_works_lists_interrupt_and_not_compact(api: FakeAnthropic, project: Path) -> None:
    fifo = project / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"), message(text("Ok."))
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "wait")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await pilot.press("f1")
        await until(pilot, lambda: "Keys and commands" in help_shown(app), "the help")
        assert "/interrupt" in help_shown(app)
        assert "/compact" not in help_shown(app)
        await pilot.press("f1")  # F1 again closes it
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help to close")
        fifo.write_text("go\n")
        await app.run_shown.wait()


@pytest.mark.usefixtures("model_env")
async def test_a_question_mark_in_words_is_typed(api: FakeAnthropic, project: Path) -> None:
    """? opens help only in an empty input: in words it is a question mark."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.click("#prompt")
        await pilot.press(*"why?")
        assert app.query_one(PromptInput).value == "why?"
        assert not isinstance(app.screen, HelpScreen)


def offered(app: object) -> list[str]:
    completions = app.query_one(CompletionList)  # type: ignore[attr-defined]
    return [c.label for c in completions.completions] if completions.shown else []


@pytest.mark.usefixtures("model_env")
async def test_typing_a_command_offers_completions_the_exact_name_first(api: FakeAnthropic, project: Path) -> None:
    """/ offers every command that works; /mode shows /mode above /model; tab takes it and then offers the
    modes; tab again takes the first; enter runs it."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.click("#prompt")
        await pilot.press("slash")
        await until(pilot, lambda: "/help" in offered(app), "the commands offered")
        assert "/approve" not in offered(app)
        assert "/help" in screen_text(app)
        await pilot.press(*"mode")
        await until(pilot, lambda: offered(app)[:2] == ["/mode [NAME]", "/model NAME"], "/mode first")
        await pilot.press("tab")
        prompt = app.query_one(PromptInput)
        assert prompt.value == "/mode "
        await until(pilot, lambda: offered(app) == ["ask", "accept-edits", "plan", "bypass"], "the modes offered")
        await pilot.press("down", "down", "tab")
        assert prompt.value == "/mode plan"
        assert offered(app) == []  # nothing more to offer
        await pilot.press("enter")
        await until(pilot, lambda: app.session.policy.mode == "plan", "the mode to change")
        assert prompt.value == ""
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_escape_puts_the_completions_away_without_interrupting(api: FakeAnthropic, project: Path) -> None:
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.click("#prompt")
        await pilot.press("slash", "h")
        await until(pilot, lambda: bool(offered(app)), "completions")
        await pilot.press("escape")
        assert offered(app) == []
        assert app.query_one(PromptInput).value == "/h"


@pytest.mark.usefixtures("model_env")
async def test_tab_on_words_still_queues_them_while_a_run_works(api: FakeAnthropic, project: Path) -> None:
    """Tab queues words as the next task; a command is never queued (one line says to press enter)."""
    fifo = project / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"),
        message(text("First.")),
        message(text("Second.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "first")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await pilot.press(*"/plan x", "tab")
        assert "/plan is a command: press enter to run it" in toasts(app)
        assert app.session.follow_ups == []
        prompt = app.query_one(PromptInput)
        prompt.value = ""
        await pilot.press(*"//etc/hosts please", "tab")
        assert app.session.follow_ups == ["/etc/hosts please"]
        assert app.state.follow_ups == ["/etc/hosts please"]
        fifo.write_text("go\n")
        await until(pilot, lambda: said(app) == ["first", "/etc/hosts please"], "the follow-up to run")
        await until(pilot, lambda: app.state.follow_ups == [], "the queue to empty")


@pytest.mark.parametrize("typed", ["/frob", "/hepl now", "/", "/ help"])
@pytest.mark.usefixtures("model_env")
async def test_an_unknown_command_answers_in_one_line_and_sends_nothing(
    api: FakeAnthropic, project: Path, typed: str
) -> None:
    """An unknown command says so (naming the nearest), stays in the input to fix, and no request is made."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, typed)
        await until(pilot, lambda: "is not a command" in toasts(app), "the answer")
        assert "/help lists them" in toasts(app)
        assert app.query_one(PromptInput).value == typed
        assert said(app) == []
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
async def test_a_command_that_waits_for_the_run_is_never_steering(api: FakeAnthropic, project: Path) -> None:
    """/compact while a run works answers why in one line; the run never reads it; //words steer it."""
    fifo = project / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"), message(text("Ok."))
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "work")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await send(pilot, "/compact now")
        assert "/compact waits for the run: send it when the run ends, or interrupt it." in toasts(app)
        app.query_one(PromptInput).value = ""
        await send(pilot, "//tmp is fine too")
        fifo.write_text("go\n")
        await app.run_shown.wait()
        await app.session.bus.drain()
    sent = str([r.messages for r in api.requests])
    assert "/compact" not in sent
    assert "/tmp is fine too" in sent
    assert "//tmp" not in sent
