"""The focus model (``tui.workbench.focus``) held place by place: the focus moves only by the person's act
(a named key, a click, escape back to the input), never by a question arriving or a pause; escape from any
panel returns to the input; after an answer, a switch or a branch the next words are a task; moving the focus
never selects, replaces or drops the input's text; the footer shows the keys of what has the focus."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input

from chimera.core.events import PermissionDecided, StepEvent
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.screens.help import HelpScreen
from chimera.tui.screens.output import OutputScreen
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.widgets.tree_panel import TreePanel
from chimera.tui.workbench.focus import PLACES, key_line, place_named
from tests.catalog_helpers import write_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use
from tests.tree_helpers import branched_session
from tests.tui_helpers import answering, burst, in_palette, said, screen_text, send, until

pytestmark = pytest.mark.usefixtures("model_env")


def decisions(app: ChimeraApp) -> list[StepEvent]:
    seen: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: seen.append(e) if isinstance(e, PermissionDecided) else None)
    return seen


def footer(app: ChimeraApp) -> str:
    return screen_text(app).splitlines()[-1]


async def typed(pilot: Pilot[int], words: str) -> None:
    await pilot.press(*["space" if key == " " else key for key in words])


# --- a question never takes keys typed for the input ---------------------------------------------------


PHRASES = ["yellow", " please", " nice, go ahead", " yes", " and update the docs"]
PAUSES = [0.2, 1.0, 2.0, 5.0]  # seconds the person stops between phrases: 0.2, 1, 2 and 5


@pytest.mark.parametrize("arrives", ["before", "during", "after"])
async def test_words_typed_with_pauses_around_a_question_never_answer_it(
    api: FakeAnthropic, project: Path, arrives: str
) -> None:
    """Words typed with pauses of 0.2, 1, 2 and 5 s, the question arriving before, during or after them: no
    decision is made, the focus never leaves the input, and the input holds every key typed."""
    release, reached = threading.Event(), threading.Event()
    api.script(
        paused(message(tool_use("b1", "bash", {"command": "make clean"}), stop_reason="tool_use"), release, reached)
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    answered = decisions(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "clean up")
        await until(pilot, reached.is_set, "the model's answer on its way")
        prompt = app.query_one(PromptInput)

        async def question() -> None:
            release.set()
            await until(pilot, lambda: len(app.state.questions) == 1, "the question")

        if arrives == "before":
            await question()
        for n, phrase in enumerate(PHRASES):
            await typed(pilot, phrase)
            if n < len(PAUSES):
                await pilot.pause(PAUSES[n])
            if (arrives == "during" and n == 1) or (arrives == "after" and n == len(PAUSES) - 1):
                await question()
        assert prompt.value == "".join(PHRASES)
        assert app.focused is prompt
        assert answered == []
        assert len(app.state.questions) == 1
        assert "ctrl+y to answer" in screen_text(app)
        await pilot.press("ctrl+y", "n")
        await app.run_shown.wait()
        assert prompt.value.startswith("".join(PHRASES))  # still there, whatever the run's end gave back
    assert [e.decision for e in answered] == ["deny"]  # type: ignore[attr-defined]


async def test_moving_to_a_question_and_back_keeps_the_input_as_it_was(api: FakeAnthropic, project: Path) -> None:
    """ "hello" in the input, ctrl+y to the question, escape back: the words are neither selected nor replaced,
    the next key goes after them; the question still waits; escape again interrupts the run."""
    api.script(message(tool_use("b1", "bash", {"command": "rm -rf build"}), stop_reason="tool_use"))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    answered = decisions(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "clean up")
        await until(pilot, lambda: len(app.state.questions) == 1, "the question")
        await typed(pilot, "hello")
        prompt = app.query_one(PromptInput)
        await pilot.press("ctrl+y")
        await until(pilot, lambda: isinstance(app.focused, QuestionPanel), "ctrl+y moves to the question")
        assert "y once" in footer(app)  # the footer shows the question's keys
        await pilot.press("escape")
        await until(pilot, lambda: app.focused is prompt, "escape back to the input")
        assert len(app.state.questions) == 1  # it waits, unanswered
        await typed(pilot, "x")
        assert prompt.value == "hellox"
        assert "ctrl+y" in footer(app) or "esc" in footer(app)
        await pilot.press("escape")
        await app.run_shown.wait()
    assert [e.decision for e in answered] == ["cancelled"]  # type: ignore[attr-defined]


async def test_always_shows_its_rule_and_needs_a_second_key(api: FakeAnthropic, project: Path) -> None:
    """``a`` on a question shows the rule an "always" would keep and answers nothing; escape leaves it unkept;
    ``a`` twice keeps it and lets the call run; the focus is then back in the input."""
    api.script(message(tool_use("b1", "bash", {"command": "touch made"}), stop_reason="tool_use"), message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    answered = decisions(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "make it")
        await answering(pilot, app)
        await pilot.press("a")
        await until(pilot, lambda: "a again keeps this rule" in screen_text(app), "the rule shown")
        assert "Always allow, from now on: bash(" in screen_text(app)
        assert answered == []
        await pilot.press("escape")  # not kept: back to the question
        await until(pilot, lambda: "a again keeps this rule" not in screen_text(app), "the rule put away")
        assert answered == []
        await pilot.press("a", "a")
        await app.run_shown.wait()
        assert isinstance(app.focused, PromptInput)
    assert [e.decision for e in answered] == ["always"]  # type: ignore[attr-defined]
    assert (project / "made").exists()


async def test_the_plan_takes_the_focus_only_by_ctrl_y_and_escape_gives_it_back(
    api: FakeAnthropic, project: Path
) -> None:
    """A proposed plan waits unfocused; ctrl+y moves to it (the footer shows its keys), escape back to the input,
    the plan unanswered; answered, the focus is in the input."""
    api.script(message(text("- [ ] say hi")), message(text("Hi.")), message(text("DONE")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan greet")
        await until(pilot, lambda: app.state.questions.plan is not None, "the plan proposed")
        await pilot.pause(1.2)  # longer than the pause after which a question used to take the focus
        prompt = app.query_one(PromptInput)
        assert app.focused is prompt
        await pilot.press("ctrl+y")
        await until(pilot, lambda: isinstance(app.focused, PlanPanel), "the plan")
        assert "a approve" in footer(app)
        await pilot.press("escape")
        await until(pilot, lambda: app.focused is prompt, "back in the input")
        assert app.state.questions.plan is not None
        await pilot.press("ctrl+y", "a")
        await app.run_shown.wait()
        assert app.focused is prompt


async def test_keys_typed_in_one_instant_with_a_questions_key_go_where_it_put_the_focus(
    api: FakeAnthropic, project: Path
) -> None:
    """On the question, ``d`` and the reason typed in the same instant (one read of the terminal): every key
    is the reason's (the y of "why" allows nothing); escape and words in one instant: the words are the
    input's, the question still waits."""
    api.script(message(tool_use("b1", "bash", {"command": "touch made"}), stop_reason="tool_use"))
    api.script(message(text("Understood.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    answered = decisions(app)
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "make it")
        await answering(pilot, app)
        prompt = app.query_one(PromptInput)
        burst(app, ["escape", *"hey"])
        await until(pilot, lambda: prompt.value == "hey", "the words in the input")
        assert answered == []
        await pilot.press("ctrl+y")
        await until(pilot, lambda: isinstance(app.focused, QuestionPanel), "the question again")
        burst(app, ["d", *"why not", "enter"])
        await app.run_shown.wait()
    assert [e.decision for e in answered] == ["deny"]  # type: ignore[attr-defined]
    assert "why not" in str(api.requests[1].messages[-1])  # the model reads the reason whole
    assert not (project / "made").exists()


async def test_words_typed_in_one_instant_with_the_plans_k_are_what_to_change(
    api: FakeAnthropic, project: Path
) -> None:
    """On the plan, ``k`` and what to change typed in the same instant: all of it is what to change (the a of
    "add" approves nothing); the model gets it and plans again."""
    api.script(message(text("- [ ] say hi")), message(text("- [ ] say hi\n- [ ] wave")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "/plan greet")
        await answering(pilot, app, PlanPanel)
        burst(app, ["k", *"add a wave", "enter"])
        await until(pilot, lambda: len(api.requests) == 2, "the plan asked again")
        assert "add a wave" in str(api.requests[1].messages)
        await until(pilot, lambda: app.state.questions.plan is not None, "the revised plan, waiting")


# --- the timeline, the output viewer, the tree ------------------------------------------------------------


async def test_the_timeline_is_left_by_escape_and_a_letter_typed_there_goes_to_the_input(
    api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tab from the empty input reaches the timeline (its keys in the footer); a letter it does not take goes to
    the input with the focus, as the first of the words; escape returns; o opens a call's output and escape
    closes it back onto the timeline."""
    monkeypatch.setenv("CHIMERA_MAX_TOOL_OUTPUT", "200")  # the call's output is cut, so o has more to show
    api.script(message(tool_use("b", "bash", {"command": "seq 1 500"}), stop_reason="tool_use"), message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "count")
        await app.run_shown.wait()
        view = app.query_one(TranscriptView)
        prompt = app.query_one(PromptInput)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is view, "the timeline")
        assert "fold all" in footer(app)
        await typed(pilot, "hey")
        await until(pilot, lambda: app.focused is prompt, "the input, with the letter")
        assert prompt.value == "hey"
        prompt.value = ""
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is view, "the timeline again")
        await pilot.press("up")
        while view.cursor is not None and app.transcript.entries[view.cursor].kind != "tool":
            await pilot.press("up")
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, OutputScreen), "the output viewer")
        await pilot.press("escape")
        await until(pilot, lambda: app.focused is view, "back on the timeline")
        await pilot.press("escape")
        await until(pilot, lambda: app.focused is prompt, "escape back to the input")


async def test_words_typed_in_one_instant_on_the_timeline_all_reach_the_input(
    api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a call in the timeline, "hello now" typed in one instant (one read of the terminal): every letter
    is the input's, in order (its o opens no output, its n finds no failed call); escape and words in one
    instant likewise."""
    monkeypatch.setenv("CHIMERA_MAX_TOOL_OUTPUT", "200")  # the call's output is cut, so o has more to show
    api.script(message(tool_use("b", "bash", {"command": "seq 1 500"}), stop_reason="tool_use"), message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "count")
        await app.run_shown.wait()
        view = app.query_one(TranscriptView)
        prompt = app.query_one(PromptInput)
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is view, "the timeline")
        await pilot.press("up")
        while view.cursor is not None and app.transcript.entries[view.cursor].kind != "tool":
            await pilot.press("up")
        burst(app, [*"hello now"])
        await until(pilot, lambda: prompt.value == "hello now", "every letter in the input")
        assert app.focused is prompt
        assert not isinstance(app.screen, OutputScreen)
        prompt.value = ""
        await pilot.press("tab")
        await until(pilot, lambda: app.focused is view, "the timeline again")
        burst(app, ["escape", *"on"])
        await until(pilot, lambda: prompt.value == "on", "the words after escape in the input")
        assert not isinstance(app.screen, OutputScreen)


async def test_z_is_named_for_what_it_does_in_the_footer_and_the_help(api: FakeAnthropic, project: Path) -> None:
    """z folds or unfolds every entry (it toggles): the timeline's footer and the help say "fold/unfold all"."""
    api.script(message(text("Hi.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "hello")
        await app.run_shown.wait()
        await pilot.press("tab")
        await until(pilot, lambda: isinstance(app.focused, TranscriptView), "the timeline")
        await until(pilot, lambda: "z fold/unfold all" in footer(app), "the footer's words for z")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        app.screen.query_one("#help-body").scroll_end(animate=False)  # the timeline's keys come last
        await until(pilot, lambda: "z              Fold/unfold all" in screen_text(app), "the help's words for z")


async def test_after_a_switch_in_the_tree_the_next_words_are_a_task(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """ctrl+t to the tree (its keys in the footer), a switch taken with enter and y: the focus is back in the
    input and what is typed next is sent as a task on the branch switched to; escape also leaves the tree."""
    ids = branched_session(isolated_env, project)
    api.script(message(text("On the other branch.")))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await pilot.press("ctrl+t")
        await until(pilot, app.session_tree.shown.is_set, "the tree")
        panel = app.query_one(TreePanel)
        assert app.focused is panel
        assert "enter switch" in footer(app)
        await pilot.press("escape")
        await until(pilot, lambda: isinstance(app.focused, PromptInput), "escape leaves the tree")
        await pilot.press("ctrl+t")
        await until(pilot, lambda: app.focused is panel, "the tree again")
        while panel.view.selected is None or panel.view.selected.node != ids["a2"]:
            await pilot.press("down")
        app.history_shown.clear()
        await pilot.press("enter", "y")
        await until(pilot, lambda: isinstance(app.focused, PromptInput), "the input after the switch")
        await until(pilot, app.history_shown.is_set, "the branch switched to")
        await send(pilot, "go on")
        await app.run_shown.wait()
        assert said(app)[-1] == "go on"
        assert ids["a2"] in [node.id for node in app.session.store.tree.path()]  # on the branch switched to


async def test_words_typed_in_a_burst_after_the_switchs_y_are_the_next_task(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """``y`` to a switch and the next task typed in the same instant (one read of the terminal): the focus is in
    the input from the y on, so every key of the task lands there, and it is sent on the branch switched to
    once the switch is done; none of them acts on the tree."""
    ids = branched_session(isolated_env, project)
    api.script(message(text("On the other branch.")))
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await pilot.press("ctrl+t")
        await until(pilot, app.session_tree.shown.is_set, "the tree")
        panel = app.query_one(TreePanel)
        while panel.view.selected is None or panel.view.selected.node != ids["a2"]:
            await pilot.press("down")
        await pilot.press("enter")
        await until(pilot, lambda: "y/n" in screen_text(app), "the switch asked")
        burst(app, ["y", *"go on", "enter"])
        await until(pilot, lambda: said(app)[-1:] == ["go on"], "the words sent as a task")
        await app.run_shown.wait()
        assert isinstance(app.focused, PromptInput)
        assert ids["a2"] in [node.id for node in app.session.store.tree.path()]  # on the branch switched to
        assert app.session_tree.moves == [("switch", ids["a3"])]  # one move: no branch, no second switch


async def test_a_search_typed_in_a_burst_reaches_the_trees_search(
    api: FakeAnthropic, isolated_env: Path, project: Path
) -> None:
    """``/`` in the tree and the words to search for typed in the same instant: all of them are the search
    (``b`` among them never branches, ``c`` never names a checkpoint); escape, then escape again, are back in
    the input."""
    branched_session(isolated_env, project)
    app = build_app(RunOptions(resume="s1", model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, app.history_shown.is_set, "history shown")
        await pilot.press("ctrl+t")
        await until(pilot, app.session_tree.shown.is_set, "the tree")
        field = app.query_one("#tree-input")
        burst(app, ["slash", *"bug cb"])
        await until(pilot, lambda: getattr(field, "value", "") == "bug cb", "the search typed")
        assert app.focused is field
        assert app.session_tree.moves == []
        burst(app, ["escape", "escape", *"hi"])
        await until(pilot, lambda: app.query_one(PromptInput).value == "hi", "the words in the input")


def test_every_place_of_the_focus_model_says_how_it_is_left_and_where_the_focus_lands() -> None:
    """The model is written down whole: every place names what it takes, how it is reached and left, and where
    the focus goes after it acts; every panel and screen can be left by escape."""
    screens = ["sessions", "mcp", "help"]
    assert [p.name for p in PLACES] == ["input", "timeline", "question", "plan", "tree", "compare", "output", *screens]
    for place in PLACES:
        assert all((place.takes, place.reached, place.left, place.after)), place.name
    for name in ("timeline", "question", "plan", "tree", "compare", "output", *screens):
        assert "escape" in place_named(name).left, name


# --- the screens a command opens: the picker, the MCP servers, the help ------------------------------------


def broken_server(folder: Path) -> Path:
    """An MCP config naming one server that cannot start (it fails at once: the panel lists it, with its keys)."""
    config = folder / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"gone": {"command": "/nowhere/mcp-server"}}}))
    return config


async def opened(pilot: Pilot[int], app: ChimeraApp, name: str) -> None:
    """Open the screen ``name`` as a person does with words in the input: the palette, or f1 for the help."""
    if name == "help":
        await pilot.press("f1")
    else:
        await in_palette(pilot, app, name, {"sessions": "Sessions", "mcp": "MCP servers"}[name])
    await until(pilot, lambda: app.place() == name, f"the {name} screen")


@pytest.mark.parametrize("name", ["sessions", "mcp", "help"])
async def test_escape_from_a_screen_a_command_opened_returns_to_the_input_as_it_was(
    api: FakeAnthropic, project: Path, tmp_path: Path, name: str
) -> None:
    """The picker, the MCP servers and the help each show their own keys while they have the focus; escape
    closes each and the focus is back in the input, its words untouched and the next key typed after them."""
    app = build_app(RunOptions(workdir=project, model=MODEL, mcp_config=broken_server(tmp_path)))
    async with app.run_test(size=(120, 40)) as pilot:
        await until(pilot, lambda: app.state.status.mcp == "mcp 0/1", "the server failed")
        await typed(pilot, "half a thought")
        await opened(pilot, app, name)
        keys = key_line(place_named(name).keys if name != "mcp" else place_named(name).keys[:3])
        await until(pilot, lambda: keys in screen_text(app), f"the {name} screen's keys")
        await pilot.press("escape")
        prompt = app.query_one(PromptInput)
        await until(pilot, lambda: app.focused is prompt, "escape back to the input")
        assert app.place() == "input"
        await typed(pilot, "!")
        assert prompt.value == "half a thought!"


@pytest.mark.parametrize(
    "keys", [[*"/help", "enter"], ["?"], ["f1"], [*"/mcp", "enter"]], ids=["/help", "?", "f1", "/mcp"]
)
async def test_keys_typed_in_one_instant_with_the_key_that_opens_a_screen_reach_that_screen(
    api: FakeAnthropic, project: Path, keys: list[str]
) -> None:
    """``/help`` (or ``?``, f1, ``/mcp``) and enter, then escape and words, typed in one instant: the screen opened
    takes the escape (it closes) and the words are the input's; none is lost behind the screen, none reaches
    the input while the screen is over it."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        burst(app, [*keys, "escape", *"hi"])
        prompt = app.query_one(PromptInput)
        await until(pilot, lambda: prompt.value == "hi", "the words after the escape in the input")
        assert app.place() == "input"
        assert app.focused is prompt


async def test_a_filter_typed_in_one_instant_with_sessions_and_enter_filters_the_sessions(
    api: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    """``/sessions``, enter and a filter typed in one instant (a fast typist, a script): the picker opens with the
    focus in its filter, which holds every letter, and lists the one session it matches; the input holds none."""
    now = time.time()
    write_session(isolated_env, "5e550001", str(project), "alpha release notes", updated=now - 60)
    write_session(isolated_env, "5e550002", str(project), "beta cleanup", updated=now - 120)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        burst(app, [*"/sessions", "enter", *"alpha"])
        await until(pilot, lambda: app.place() == "sessions", "the picker")
        await until(pilot, lambda: "1 of 2 sessions match “alpha”" in screen_text(app), "the sessions filtered")
        assert app.screen.query_one("#picker-filter", Input).value == "alpha"
        assert "alpha release notes" in screen_text(app)
        assert app.query_one(PromptInput).value == ""


async def test_keys_held_behind_an_enter_the_input_never_acts_on_still_arrive(
    api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the input never say it acted on an enter (something else took it first), the words typed behind the
    enter are held only a moment: they arrive in the input, in order, none lost."""
    real = PromptInput.post_message

    def no_acted(self: PromptInput, message: object) -> bool:
        if isinstance(message, PromptInput.Acted):
            return True  # lost on the way: the hold is never released by the input
        return real(self, message)  # type: ignore[arg-type]

    monkeypatch.setattr(PromptInput, "post_message", no_acted)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        burst(app, ["enter", *"hi"])
        prompt = app.query_one(PromptInput)
        await until(pilot, lambda: app.keys.held.holding, "the keys held behind the enter")
        await until(pilot, lambda: prompt.value == "hi", "the held words in the input")
        assert not app.keys.held.holding
