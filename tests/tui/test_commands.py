"""Every command of the registry, run in the workbench the ways a person can: typed with its slash, chosen in
the command palette (ctrl+p), and by its keys when it has some; each time what it does shows (a screen, the
status line, a file, a new session…), against the loopback Messages API."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.providers.factory import DEFAULT_MODEL as OTHER_MODEL
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.commands import COMMANDS, find
from chimera.tui.screens.compare import CompareScreen
from chimera.tui.screens.help import HelpScreen
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, status, text, tool_use
from tests.tui_helpers import answering, entries, in_palette, screen_text, send, toasts, until

Step = Callable[[Pilot[int], ChimeraApp], Awaitable[None]]


async def nothing(pilot: Pilot[int], app: ChimeraApp) -> None:
    pass


async def one_run(pilot: Pilot[int], app: ChimeraApp) -> None:
    """A task done, so the session has something to list, export and replay."""
    await send(pilot, "say hi")
    await app.run_shown.wait()
    await until(pilot, lambda: not app.running, "the run to end")
    app.run_shown.clear()


async def a_plan_waits(pilot: Pilot[int], app: ChimeraApp) -> None:
    """/plan greet: the plan's panel asks (it has the focus once the person paused typing)."""
    await send(pilot, "/plan greet")
    await answering(pilot, app, PlanPanel)


async def a_call_waits(pilot: Pilot[int], app: ChimeraApp) -> None:
    """In ask mode a write waits for its permission (the question has the focus)."""
    app.session.configure(mode="ask")
    await send(pilot, "write it")
    await answering(pilot, app)


async def a_call_waits_unfocused(pilot: Pilot[int], app: ChimeraApp) -> None:
    """The question waits while the person is back in the input."""
    await a_call_waits(pilot, app)
    await pilot.click("#prompt")


def answered(decision: str, result: str) -> Step:
    async def check(pilot: Pilot[int], app: ChimeraApp) -> None:
        if decision == "deny-why":  # d, /deny-why or the palette's: the reason is asked in one line
            await until(pilot, lambda: getattr(app.focused, "id", "") == "question-reason", "the reason asked")
            await pilot.press(*"not now", "enter")
        if decision == "always" and app.query_one(QuestionPanel).confirming_always:  # a: the rule shown first
            await until(pilot, lambda: "a again keeps this rule" in screen_text(app), "the rule shown")
            assert not (app.session.env.workdir / "a.txt").exists()  # nothing is answered by the first a
            await pilot.press("a")
        if decision == "always-rule" and app.query("#question-rule"):  # e: the rule is offered to edit
            await until(pilot, lambda: getattr(app.focused, "id", "") == "question-rule", "the rule to edit")
            await pilot.press("enter")
        await app.run_shown.wait()
        assert (app.session.env.workdir / "a.txt").exists() == (decision in {"allow", "always", "always-rule"})
        assert result in str(shown_texts(app))

    return check


def shown_texts(app: ChimeraApp) -> list[object]:
    return [e.text for e in app.transcript.entries]


async def went_to_question(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: isinstance(app.focused, QuestionPanel), "the focus on the question")
    app.answers.answer_permission("deny")
    await app.run_shown.wait()


async def revising(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: getattr(app.focused, "id", "") == "plan-feedback", "what to change asked")
    await pilot.press(*"add a wave", "enter")
    await until(pilot, lambda: "added" in app.state.plan.changes, "the revised plan")
    assert app.state.questions.plan is not None  # asked afresh
    app.answers.answer_plan("cancel")
    await app.run_shown.wait()


async def a_command_runs(pilot: Pilot[int], app: ChimeraApp) -> None:
    await send(pilot, "wait for it")
    await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")


async def ran_the_plan(pilot: Pilot[int], app: ChimeraApp) -> None:
    await app.run_shown.wait()
    await until(pilot, lambda: app.state.status.state == "done", "the plan to be carried out")
    assert app.state.plan.checks == [True]
    assert app.state.status.loop == "react"  # the plan was that task's alone: the session's strategy shows again


async def plan_asked(pilot: Pilot[int], app: ChimeraApp) -> None:
    await answering(pilot, app, PlanPanel)
    assert app.state.questions.plan is not None
    assert app.state.status.loop == "plan"
    await pilot.press("c", "y")  # the run ends (cancelled)
    await app.run_shown.wait()


async def editing(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: app.query_one(PlanPanel).editing, "editor")
    app.answers.answer_plan("cancel")  # the run still waits on the plan: end it
    await app.run_shown.wait()


async def cancelled(pilot: Pilot[int], app: ChimeraApp) -> None:
    if app.query_one(PlanPanel).confirming:  # c asks once
        await pilot.press("y")
    await app.run_shown.wait()
    await until(pilot, lambda: app.state.status.state == "cancelled", "the run to end cancelled")
    assert app.state.questions.plan is None


async def interrupted(pilot: Pilot[int], app: ChimeraApp) -> None:
    await app.run_shown.wait()
    await until(pilot, lambda: app.state.status.state == "interrupted", "the run to stop")


def shown(words: str) -> Step:
    async def check(pilot: Pilot[int], app: ChimeraApp) -> None:
        await until(pilot, lambda: words in screen_text(app) or words in toasts(app), repr(words))

    return check


def holds(what: str, value: Callable[[ChimeraApp], object], expected: object) -> Step:
    async def check(pilot: Pilot[int], app: ChimeraApp) -> None:
        await until(pilot, lambda: value(app) == expected, what)

    return check


async def compared(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: isinstance(app.screen, CompareScreen), "the compare view")
    assert isinstance(app.screen, CompareScreen)
    await until(pilot, lambda: "completed" in screen_text(app) and app.screen.rows is not None, "its rows")


async def resent(pilot: Pilot[int], app: ChimeraApp) -> None:
    await app.run_shown.wait()
    await until(pilot, lambda: "Hi, again." in screen_text(app), "the refused task's answer")


async def help_up(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")


async def exported(pilot: Pilot[int], app: ChimeraApp) -> None:
    path = app.session.env.workdir / f"chimera-{app.session.id}.md"
    await until(pilot, path.exists, "the export")
    assert "say hi" in path.read_text()
    assert str(path) in screen_text(app).replace("\n", "")


async def a_named_run(pilot: Pilot[int], app: ChimeraApp) -> None:
    """A task done, its answer named ``hi``."""
    await one_run(pilot, app)
    app.session.checkpoint("hi")


async def a_named_run_then_more(pilot: Pilot[int], app: ChimeraApp) -> None:
    """A task done, its answer named ``hi``, then another: the session has moved on from ``hi``."""
    await a_named_run(pilot, app)
    await one_run(pilot, app)


async def a_branch_made(pilot: Pilot[int], app: ChimeraApp) -> None:
    await a_named_run(pilot, app)
    app.session_tree.moved.clear()
    app.session_tree.branch_at("hi")
    await app.session_tree.moved.wait()
    app.session_tree.moved.clear()


async def switched_after_yes(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: "Switch to" in screen_text(app), "the switch asked")
    await pilot.press("y")
    await until(pilot, lambda: "Switched to" in toasts(app), "the switch")


async def quitted(pilot: Pilot[int], app: ChimeraApp) -> None:
    await until(pilot, lambda: app.return_code == 0, "the app to quit")


@dataclass(frozen=True)
class Case:
    """How to bring a command to where it works, its argument, and what shows once it ran."""

    before: Step = nothing
    argument: str = ""
    after: Step = nothing
    replies: tuple[object, ...] = ()


PLAN_REPLIES = (message(text("- [ ] say hello")), message(text("Hello.")), message(text("DONE")))
REVISED_REPLIES = (message(text("- [ ] say hello")), message(text("- [ ] say hello\n- [ ] wave")))
WRITE_REPLIES = (
    message(tool_use("w1", "write", {"path": "a.txt", "content": "a"}), stop_reason="tool_use"),
    message(text("Done.")),
)
WAITING = (message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"),)

CASES: dict[str, Case] = {
    "help": Case(after=help_up),
    "plan": Case(argument="greet", after=plan_asked, replies=PLAN_REPLIES),
    "approve": Case(before=a_plan_waits, after=ran_the_plan, replies=PLAN_REPLIES),
    "edit": Case(before=a_plan_waits, after=editing, replies=PLAN_REPLIES),
    "cancel": Case(before=a_plan_waits, after=cancelled, replies=PLAN_REPLIES),
    "keep-planning": Case(before=a_plan_waits, after=revising, replies=REVISED_REPLIES),
    "question": Case(before=a_call_waits_unfocused, after=went_to_question, replies=WRITE_REPLIES),
    "allow": Case(before=a_call_waits, after=answered("allow", "Done."), replies=WRITE_REPLIES),
    "always": Case(before=a_call_waits, after=answered("always", "Done."), replies=WRITE_REPLIES),
    "always-rule": Case(
        before=a_call_waits, argument="write(a.*)", after=answered("always-rule", "Done."), replies=WRITE_REPLIES
    ),
    "deny": Case(before=a_call_waits, after=answered("deny", "Done."), replies=WRITE_REPLIES),
    "deny-why": Case(before=a_call_waits, after=answered("deny-why", "Done."), replies=WRITE_REPLIES),
    "loop": Case(argument="reflexion", after=holds("the strategy", lambda a: a.state.status.loop, "reflexion")),
    "model": Case(argument=OTHER_MODEL, after=holds("the model", lambda a: a.state.status.model, OTHER_MODEL)),
    "mode": Case(argument="bypass", after=holds("the mode", lambda a: a.state.status.mode, "bypass")),
    "theme": Case(argument="chimera-light", after=holds("the theme", lambda a: a.theme, "chimera-light")),
    "compact": Case(after=shown("Nothing to compact: the conversation is still short.")),
    "sessions": Case(before=one_run, after=shown("Resume a session"), replies=(message(text("Hi.")),)),
    "export": Case(before=one_run, after=exported, replies=(message(text("Hi.")),)),
    "replay": Case(before=one_run, after=shown("chimera replay"), replies=(message(text("Hi.")),)),
    "new": Case(after=shown("A new session")),
    "resend": Case(
        before=one_run,  # its task refused by the server
        after=resent,
        replies=(status(400, "invalid_request_error", "malformed"), message(text("Hi, again."))),
    ),
    "compare": Case(
        before=one_run, argument="label=one label=two", after=compared, replies=(message(text("Hi.")),) * 3
    ),
    "interrupt": Case(before=a_command_runs, after=interrupted, replies=WAITING),
    "tree": Case(before=one_run, after=shown("Session tree · 2 lines"), replies=(message(text("Hi.")),)),
    "switch": Case(
        before=a_named_run_then_more, argument="hi", after=switched_after_yes, replies=(message(text("Hi.")),) * 2
    ),
    "branch": Case(before=a_named_run, argument="hi", after=shown("branches from"), replies=(message(text("Hi.")),)),
    "checkpoint": Case(before=one_run, after=shown("Checkpoint 'checkpoint-1'"), replies=(message(text("Hi.")),)),
    "label": Case(
        before=a_named_run,
        argument="hi first answer",
        after=holds("the label", lambda a: "first answer" in a.session.store.tree.names, True),
        replies=(message(text("Hi.")),),
    ),
    "back": Case(
        before=a_branch_made,
        after=holds("no move left", lambda a: a.session_tree.moves, []),
        replies=(message(text("Hi.")),),
    ),
    "mcp": Case(after=shown("None configured: give them in config.toml")),
    "quit": Case(after=quitted),
}

WAYS = [(c.id, "slash") for c in COMMANDS] + [(c.id, "palette") for c in COMMANDS]
WAYS += [(c.id, f"key {key}") for c in COMMANDS for key in c.keys.split(",") if c.keys]


def test_every_command_has_a_case() -> None:
    assert set(CASES) == {c.id for c in COMMANDS}


async def by_slash(pilot: Pilot[int], app: ChimeraApp, name: str, argument: str) -> None:
    await send(pilot, f"/{name} {argument}".strip())  # a question waits beside the input meanwhile


async def by_palette(pilot: Pilot[int], app: ChimeraApp, name: str, argument: str) -> None:
    command = find(name)
    assert command is not None
    if command.needs_argument and argument not in command.choices(app.facts()):  # free words: the input finishes
        await in_palette(pilot, app, name, f"{command.title}…")
        await until(pilot, lambda: app.query_one(PromptInput).value == f"/{name} ", "the command in the input")
        await pilot.press(*argument, "enter")
    elif argument in command.choices(app.facts()):
        await in_palette(pilot, app, f"{name} {argument}", f"{command.title}: {argument}")
    else:
        await in_palette(pilot, app, name, command.title)


@pytest.mark.parametrize(("name", "way"), WAYS, ids=[f"{n}-{w}" for n, w in WAYS])
@pytest.mark.usefixtures("model_env")
async def test_a_command_runs_by_slash_palette_and_key(api: FakeAnthropic, project: Path, name: str, way: str) -> None:
    """The command does what it says, whichever way it was given; nothing typed as a command reached the model."""
    case = CASES[name]
    os.mkfifo(project / "go.fifo")
    api.script(*case.replies)
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await case.before(pilot, app)
        if way == "slash":
            await by_slash(pilot, app, name, case.argument)
        elif way == "palette":
            await by_palette(pilot, app, name, case.argument)
        else:
            await pilot.press(way.removeprefix("key "))
        await case.after(pilot, app)
        if name == "interrupt":
            (project / "go.fifo").unlink()
    asked = str([r.messages for r in api.requests])
    assert f"/{name}" not in asked
