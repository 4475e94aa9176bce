"""Outside text stays text: whatever the model, a tool, a file name, a label, a session or the person's typing
holds (markup, terminal controls, odd line breaks, 10,000 characters) shows as its characters on every screen,
panel, question and notification, and nothing crashes. The code's own rules that keep it so are held too."""

from __future__ import annotations

import ast
import shlex
import time
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.pilot import Pilot

import chimera.tui
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.picker_app import PickerApp
from chimera.tui.screens.sessions import SessionPicker
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.widgets.tree_panel import TreePanel
from tests.catalog_helpers import write_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, thinking, tool_use
from tests.hostile import HOSTILE, LONG, SHORT, literally, no_outside_actions, shows
from tests.tui_helpers import asked, screen_text, toasts, until

TUI = Path(chimera.tui.__file__).parent
WIDE = (200, 60)


# --- the rules in the code ------------------------------------------------------------------


def _calls(name: str) -> list[tuple[str, ast.Call]]:
    found = []
    for path in sorted(TUI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call):
                func = node.func
                called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if called == name:
                    found.append((f"{path.relative_to(TUI)}:{node.lineno}", node))
    return found


def test_every_notification_goes_through_tell() -> None:
    """No widget or screen calls Textual's notify itself: only ``tui.outside.tell`` does, with markup off."""
    direct = [where for where, _ in _calls("notify") if not where.startswith("outside.py")]
    assert direct == []


def test_no_static_reads_markup() -> None:
    """Every ``Static`` the workbench builds is told not to read markup, so a string given to it is shown as it is."""
    reading = [
        where
        for where, call in _calls("Static")
        if not any(
            k.arg == "markup" and isinstance(k.value, ast.Constant) and k.value.value is False for k in call.keywords
        )
    ]
    assert reading == []


def test_markup_is_parsed_only_from_chimeras_own_literals() -> None:
    """``from_markup`` (Textual's or Rich's) is only ever given a string literal written in the code."""
    parsed = [
        where
        for name in ("from_markup", "render_markup")
        for where, call in _calls(name)
        if not (call.args and isinstance(call.args[0], ast.Constant))
    ]
    assert parsed == []


# --- driving the workbench --------------------------------------------------------------------


async def typed(pilot: Pilot[int], app: ChimeraApp, words: str) -> None:
    """Paste ``words`` into the empty input (as a terminal's bracketed paste gives it), and press enter."""
    prompt = app.query_one(PromptInput)
    prompt.focus()
    prompt.value = ""
    prompt.post_message(events.Paste(words))
    await until(pilot, lambda: bool(prompt.value), "the paste in the input")
    await pilot.press("enter")


async def whole_conversation(pilot: Pilot[int], app: ChimeraApp) -> str:
    """Every line of the conversation, read off the screen a page at a time from the top."""
    view = app.query_one(TranscriptView)
    seen = []
    view.scroll_to(y=0, animate=False)
    await pilot.pause()
    while True:
        seen.append(screen_text(app))
        if view.scroll_offset.y >= view.max_scroll_y:
            return "\n".join(seen)
        view.scroll_to(y=view.scroll_offset.y + view.size.height - 1, animate=False)
        await pilot.pause()


def palette(app: ChimeraApp) -> str:
    """The command palette's hits as they read, each with its help."""
    from textual.command import CommandList

    hits = app.screen.query_one(CommandList)
    return "\n".join(str(hits.get_option_at_index(n).prompt) for n in range(hits.option_count))


def clean(app: ChimeraApp) -> None:
    """Nothing outside drew a live action or link, and no raw control character reached the screen."""
    assert no_outside_actions(app) == []
    shown = screen_text(app)
    assert "\x1b" not in shown
    assert "\u202e" not in shown


# --- the conversation -------------------------------------------------------------------------


@pytest.mark.usefixtures("model_env")
async def test_the_conversation_shows_every_hostile_string_as_it_is(api: FakeAnthropic, project: Path) -> None:
    """A task, thinking, an answer and tool calls (their commands, paths and output) holding markup, terminal
    controls, odd line breaks and 10,000 characters show as their characters, escaped where they would steer."""
    strings = list(HOSTILE.values())
    calls = [tool_use(f"b{n}", "bash", {"command": f"printf %s {shlex.quote(s)}"}) for n, s in enumerate(strings)]
    calls += [tool_use(f"r{n}", "read", {"path": s}) for n, s in enumerate(SHORT.values())]
    api.script(
        message(thinking("\n\n".join(strings), "sig"), text("\n\n".join(strings)), *calls, stop_reason="tool_use"),
        message(text("the end")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, " ".join(SHORT.values()))
        await app.run_shown.wait()
        shown = await whole_conversation(pilot, app)
        clean(app)
    for name, value in HOSTILE.items():
        assert shows(shown, value), name
        assert shows(shown, f"printf %s {shlex.quote(value)}"), name  # the call's own line
    assert shows(shown, " ".join(SHORT.values()), room=120)  # the task
    assert "the end" in shown


# --- notifications ------------------------------------------------------------------------------


@pytest.mark.usefixtures("model_env")
async def test_commands_given_hostile_words_answer_in_literal_lines(api: FakeAnthropic, project: Path) -> None:
    """Names and words given to commands (a checkpoint, a label, a model, a theme, a mode, an unknown command)
    come back in notifications as typed, escaped where they would steer; the workbench stays up."""
    api.script(message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=WIDE, notifications=True) as pilot:
        await typed(pilot, app, "start")
        await app.run_shown.wait()
        leaf = app.session.store.tree.leaf
        for name, value in SHORT.items():
            words = value.strip().replace("\r", "\n")  # a terminal pastes a line break as \r
            for command in (f"/checkpoint {value}", f"/label {leaf} {value}", f"/theme {value}", f"/mode {value}"):
                app.clear_notifications()
                await typed(pilot, app, command)
                await until(pilot, lambda: bool(toasts(app)), f"an answer to {command!r}")
                assert shows(toasts(app), words), (name, command, toasts(app))
            await until(pilot, lambda: shows(screen_text(app), words, room=12), f"{words!r} on screen")  # noqa: B023
            clean(app)
        app.clear_notifications()
        await typed(pilot, app, "/" + LONG)
        await until(pilot, lambda: bool(toasts(app)), "an answer to a long unknown command")
        assert shows(toasts(app), LONG)


# --- other screens ----------------------------------------------------------------------------------


async def test_the_session_picker_lists_hostile_titles_as_they_are(isolated_env: Path) -> None:
    """Sessions whose tasks hold hostile strings are listed under those tasks, escaped, never styled or run."""
    now = time.time()
    for n, value in enumerate(HOSTILE.values()):
        write_session(isolated_env, f"5e55{n:04d}", "/work/alpha", value, updated=now - 60 * (n + 1))
    app = PickerApp(Path("/work/alpha"))
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.sessions is not None, "rows")
        await pilot.pause()
        shown = screen_text(app)
        clean(app)  # type: ignore[arg-type]
    for name, value in SHORT.items():
        assert shows(shown, value, room=20), name
    assert literally(LONG, 20) in shown


# --- questions, the plan, the tree, compare ----------------------------------------------------------


@pytest.mark.usefixtures("model_env")
async def test_questions_show_the_commands_and_paths_they_ask_about_as_they_are(
    api: FakeAnthropic, project: Path
) -> None:
    """Each permission question shows the whole command or path the call holds, hostile as it is: nothing hidden
    in the background's colour, nothing cut at a carriage return, nothing clickable."""
    calls = [tool_use(f"b{n}", "bash", {"command": f"echo {value}"}) for n, value in enumerate(SHORT.values())]
    calls.append(tool_use("w", "write", {"path": "notes[@click=app.quit]x.md", "content": "[/]\x1b[2J\n"}))
    api.script(message(*calls, stop_reason="tool_use"), message(text("the end")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, "go")
        for name, value in [*SHORT.items(), ("write", "notes[@click=app.quit]x.md")]:
            await until(pilot, lambda: len(app.state.questions) == 1, f"the question about {name}")
            asked = app.state.questions.first
            await pilot.press("ctrl+y")
            await until(pilot, lambda: shows(screen_text(app), value), f"{name} asked about as it is")  # noqa: B023
            clean(app)
            await pilot.press("n")
            await until(pilot, lambda: app.state.questions.first is not asked, f"{name} answered")  # noqa: B023
        await app.run_shown.wait()
    assert not (project / "notes[@click=app.quit]x.md").exists()


@pytest.mark.usefixtures("model_env")
async def test_the_plan_shows_hostile_steps_as_written(api: FakeAnthropic, project: Path) -> None:
    """A plan whose steps hold markup and terminal controls shows each step's words, escaped, in its panel."""
    steps = [value for name, value in SHORT.items() if name not in {"ls"}]  # U+2028 ends a Markdown line
    api.script(message(text("\n".join(f"- [ ] step {value}" for value in steps))))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, "/plan do it")
        await until(pilot, lambda: app.state.questions.plan is not None, "the plan proposed")
        await pilot.pause()
        shown = screen_text(app)
        clean(app)
    for value in steps:
        assert shows(shown, f"step {value}", room=16), value


@pytest.mark.usefixtures("model_env")
async def test_the_tree_shows_hostile_labels_searches_and_file_names_as_they_are(
    api: FakeAnthropic, project: Path
) -> None:
    """Labels, a search and the files a switch would change, holding markup and controls, show in the tree panel
    as their characters; a click on them runs nothing."""
    names = {"close": "a[/]b.md", "click": "[@click=app.quit]q.md", "export": "[@click=app.export('x')]e.md"}
    api.script(
        message(
            *[tool_use(n, "write", {"path": p, "content": "x\n"}) for n, p in names.items()], stop_reason="tool_use"
        ),
        message(text("written")),
        message(text("second")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=WIDE, notifications=True) as pilot:
        await typed(pilot, app, "write them")
        await app.run_shown.wait()
        first = app.session.store.tree.leaf
        await typed(pilot, app, f"/label {first} [$background on $background]hidden[/]")
        await typed(pilot, app, "again")
        await app.run_shown.wait()
        await typed(pilot, app, "/tree")
        await until(pilot, app.session_tree.shown.is_set, "the tree")
        await until(pilot, lambda: shows(screen_text(app), "[$background on $background]hidden[/]"), "the label")
        await typed(pilot, app, f"/switch {first}")  # the preview, and the question
        await until(pilot, lambda: all(shows(screen_text(app), p) for p in names.values()), "the files listed")
        clean(app)
        await pilot.press("n")
        await pilot.press("slash")
        field = app.query_one("#tree-input")
        field.post_message(events.Paste("a[/]"))
        await until(pilot, lambda: shows(screen_text(app), "holding 'a[/]'"), "the search shown")
        clean(app)
        await pilot.press("escape", "escape")
        app.query_one(TreePanel).remove_class("-shown")  # its lines show the label too
        await pilot.press("ctrl+p", *"switch hidden")
        await until(pilot, lambda: "[$background on $background]hidden[/]" in palette(app), "the palette's hit")
        assert "/switch [$background on $background]hidden[/]" in palette(app)  # its help, too
        clean(app)


@pytest.mark.usefixtures("model_env")
async def test_a_comparison_shows_hostile_tasks_and_questions_as_they_are(api: FakeAnthropic, project: Path) -> None:
    """The compare view shows the task and a variant's question (its whole command) as their characters: a
    command cannot hide its tail in the background's colour, and a label cannot be markup at all."""
    task = "[@click=app.quit]task[/]"
    hidden = "echo safe [$background on $background]; touch PWNED #[/]"
    api.script(message(text("first")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=WIDE, notifications=True) as pilot:
        await typed(pilot, app, task)
        await app.run_shown.wait()
        await typed(pilot, app, "/compare label=[/]x label=y")
        await until(pilot, lambda: "cannot name a variant" in toasts(app), "the label refused")
        asks = message(tool_use("b", "bash", {"command": hidden}), stop_reason="tool_use")
        api.script(asks, asks, message(text("ok")), message(text("ok")))
        app.query_one(PromptInput).value = ""
        await typed(pilot, app, "/compare label=x label=y")
        await until(pilot, lambda: shows(screen_text(app), hidden, room=60), "the variant's question")
        assert shows(screen_text(app), task)
        clean(app)
        await pilot.press("n", "n")
    assert not (project / "PWNED").exists()


def test_the_compare_rows_draw_every_cell_as_its_characters() -> None:
    """The rows at a comparison's end draw a label or an outcome holding markup or controls as its characters
    (Rich reads a plain string cell as markup): no cell can hide, style or cut what follows it."""
    from rich.console import Console

    from chimera.core.compare import Row
    from chimera.tui.screens.compare import rows_grid

    console = Console(width=400, record=True, color_system=None)
    console.print(rows_grid([Row(value, None, value) for value in SHORT.values()]))
    drawn = console.export_text()
    for name, value in SHORT.items():
        assert drawn.count(literally(value, 20)) >= 2, name  # the label and the outcome
    assert "\x1b" not in drawn


# --- the status line, the welcome, the output viewer, a server's error --------------------------------


@pytest.mark.usefixtures("model_env")
async def test_a_hostile_workspace_name_shows_as_it_is(api: FakeAnthropic, tmp_path: Path) -> None:
    """A workspace folder named with markup shows literally in the welcome and the status line."""
    workdir = tmp_path / "[@click=app.quit]w[$background on $background]"
    workdir.mkdir()
    app = build_app(RunOptions(workdir=workdir, model=MODEL))
    async with app.run_test(size=(260, 60)) as pilot:  # room on the status line for the whole long path
        await pilot.pause()
        shown = screen_text(app)
        clean(app)
    assert shown.count("[@click=app.quit]w[$background on $background]") >= 2


@pytest.mark.usefixtures("model_env")
async def test_a_servers_hostile_error_is_shown_as_its_words(api: FakeAnthropic, project: Path) -> None:
    """An error the server sends, holding markup and controls, is shown as its words in the conversation."""
    from tests.fake_anthropic import status

    api.script(status(400, "invalid_request_error", "bad [/] \x1b]0;x\x07 [@click=app.quit]here"))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, "go")
        await app.run_shown.wait()
        await until(pilot, lambda: "bad [/] \\x1b]0;x\\x07 [@click=app.quit]here" in screen_text(app), "the error")
        clean(app)


async def test_the_output_viewer_titles_a_hostile_call_as_it_is(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A call whose output was cut opens in the viewer under its command, hostile as it is."""
    from chimera.tui.screens.output import OutputScreen

    monkeypatch.setenv("CHIMERA_MAX_TOOL_OUTPUT", "200")
    command = "seq 1 500 # [@click=app.quit][/]"
    api.script(message(tool_use("b", "bash", {"command": command}), stop_reason="tool_use"), message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, "count")
        await app.run_shown.wait()
        await pilot.press("tab")  # from the empty input to the timeline
        view = app.query_one(TranscriptView)
        await until(pilot, lambda: app.focused is view, "the timeline")
        await pilot.press("end" if False else "up")
        await until(pilot, lambda: view.cursor is not None, "an entry under the cursor")
        while view.cursor is not None and app.transcript.entries[view.cursor].kind != "tool":
            await pilot.press("up")
        await pilot.press("o")
        await until(pilot, lambda: isinstance(app.screen, OutputScreen), "the viewer")
        await pilot.pause()
        shown = screen_text(app)
        clean(app)
    assert shows(shown, command)


@pytest.mark.usefixtures("model_env")
async def test_the_mcp_panel_shows_hostile_server_names_and_errors_as_they_are(
    api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    """Servers named with markup and controls, whose commands fail, are listed and shown in full as their
    characters, each one chosen in turn."""
    import json

    from chimera.tui.screens.mcp import McpScreen

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {value: {"command": f"/no/{value}"} for value in SHORT.values()}}))
    app = build_app(RunOptions(workdir=project, model=MODEL, mcp_config=config))
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: app.state.status.mcp == f"mcp 0/{len(SHORT)}", "every server failed")
        app.clear_notifications()
        await typed(pilot, app, "/mcp")
        await until(pilot, lambda: isinstance(app.screen, McpScreen), "the panel")
        listed = screen_text(app)
        for value in SHORT.values():
            assert shows(listed, value, room=20), value
            await until(pilot, lambda value=value: shows(screen_text(app), f"/no/{value}"), f"{value!r} in full")
            await pilot.press("down")
        clean(app)


@pytest.mark.usefixtures("model_env")
async def test_the_help_lists_hostile_server_names_as_they_are(
    api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    """The help lists the MCP servers by their names (outside text, from a config): each shows as its
    characters, escaped where it would steer, on a help that opens and scrolls to the end."""
    import json

    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {value: {"command": f"/no/{value}"} for value in SHORT.values()}}))
    app = build_app(RunOptions(workdir=project, model=MODEL, mcp_config=config))
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: app.state.status.mcp == f"mcp 0/{len(SHORT)}", "every server failed")
        await pilot.press("f1")
        await until(pilot, lambda: app.place() == "help", "the help")
        body = app.screen.query_one("#help-body")
        seen = []
        while True:  # a page at a time, to the end
            await pilot.pause()
            seen.append(screen_text(app))
            clean(app)
            if body.scroll_offset.y >= body.max_scroll_y:
                break
            body.scroll_to(y=body.scroll_offset.y + body.size.height - 1, animate=False)
        shown = "\n".join(seen)
        assert "MCP servers (/mcp)" in shown
    for name, value in SHORT.items():
        assert shows(shown, f"{value}: ", room=20), name


@pytest.mark.usefixtures("model_env")
async def test_the_kept_answers_list_hostile_commands_as_they_are(api: FakeAnthropic, project: Path) -> None:
    """Commands kept by an "always" (a a) holding markup and controls are listed by ``/mode`` as their
    characters: the rule that lets a command run unasked cannot hide or restyle part of it."""
    values = SHORT
    calls = [
        message(tool_use(f"b{n}", "bash", {"command": f"echo {value}"}), stop_reason="tool_use")
        for n, value in enumerate(values.values())
    ]
    api.script(*calls, message(text("done")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, "echo them")
        for n, _ in enumerate(values):
            await asked(pilot, app)
            await pilot.press("a", "a")
            await until(pilot, lambda n=n: len(app.session.kept_numbers) == n + 1, "kept")
        await app.run_shown.wait()
        await typed(pilot, app, "/mode")
        await until(pilot, lambda: "Permission mode" in screen_text(app), "the kept answers listed")
        shown = await whole_conversation(pilot, app)
        clean(app)
    for name, value in values.items():
        assert shows(shown, f". bash(echo {value})", room=40), name


async def test_a_replay_shows_the_recorded_hostile_strings_as_they_are(isolated_env: Path, tmp_path: Path) -> None:
    """``chimera replay`` of a session whose task, answer, call and output hold hostile strings draws every one
    as its characters, escaped where it would steer, and nothing on it acts on a click."""
    from chimera.core.sessions.store import SessionStore
    from chimera.tui.replay_app import ReplayApp

    strings = list(HOSTILE.values())
    with SessionStore.create(isolated_env, "h1", workdir=tmp_path, model=MODEL) as store:
        store.add("user", {"role": "user", "content": " ".join(SHORT.values())})
        calls = [
            {"type": "tool_use", "id": f"c{n}", "name": "bash", "input": {"command": f"printf %s {shlex.quote(s)}"}}
            for n, s in enumerate(strings)
        ]
        store.add(
            "assistant", {"role": "assistant", "content": [{"type": "text", "text": "\n\n".join(strings)}, *calls]}
        )
        results = [{"type": "tool_result", "tool_use_id": f"c{n}", "content": s} for n, s in enumerate(strings)]
        store.add("tool_result", {"role": "user", "content": results})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "the end"}]})
        store.sync()
    app = ReplayApp("h1")
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: app.ended, "the replay ended")
        shown = await whole_conversation(pilot, app)  # type: ignore[arg-type]
        clean(app)  # type: ignore[arg-type]
    for name, value in HOSTILE.items():
        assert shows(shown, value), name
        assert shows(shown, f"printf %s {shlex.quote(value)}"), name
    assert shows(shown, " ".join(SHORT.values()), room=120)
    assert "the end" in shown


# --- pastes into the panels' fields ------------------------------------------------------------------

PASTED = "\x1b[2J\x1b]52;c;cHduZWQ=\x07[/]red\u202eabc"


async def pasted_shows_literally(pilot: Pilot[Any], app: object, field: str) -> None:
    """Paste :data:`PASTED` as the terminal gives it (to the app, for what has the focus) and wait until the
    screen shows it as its characters; nothing on screen steers the terminal or acts on a click."""
    app.post_message(events.Paste(PASTED + "\nsecond line"))  # type: ignore[attr-defined]
    await until(pilot, lambda: literally(PASTED, 60) in screen_text(app), f"the paste shown in {field}")
    clean(app)  # type: ignore[arg-type]


@pytest.mark.usefixtures("model_env")
async def test_a_paste_into_any_field_shows_as_its_characters(api: FakeAnthropic, project: Path) -> None:
    """Pasting colour codes, a clipboard-writing OSC and a bidi override into the question's reason, the tree's
    search and the palette's line shows their characters, escaped, never drawn raw (Textual's fields draw what
    they hold as it is)."""
    api.script(message(tool_use("b", "bash", {"command": "make"}), stop_reason="tool_use"), message(text("ok")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="ask"))
    async with app.run_test(size=WIDE) as pilot:
        await typed(pilot, app, "build it")
        await until(pilot, lambda: len(app.state.questions) == 1, "the question")
        await pilot.press("ctrl+y", "d")
        await until(pilot, lambda: app.focused is not None and app.focused.id == "question-reason", "the reason")
        await pasted_shows_literally(pilot, app, "the question's reason")
        await pilot.press("escape", "n")
        await app.run_shown.wait()
        await typed(pilot, app, "/tree")
        await until(pilot, app.session_tree.shown.is_set, "the tree")
        await pilot.press("slash")
        await until(pilot, lambda: app.focused is app.query_one("#tree-input"), "the tree's search")
        await pasted_shows_literally(pilot, app, "the tree's search")
        await pilot.press("escape", "escape", "ctrl+p")
        await until(pilot, lambda: "CommandPalette" in type(app.screen).__name__, "the palette")
        await pasted_shows_literally(pilot, app, "the palette's line")


async def test_a_paste_into_the_pickers_filter_shows_as_its_characters(isolated_env: Path) -> None:
    """The session picker's filter shows a pasted escape sequence and bidi override as their characters."""
    write_session(isolated_env, "5e550001", "/work/alpha", "a task", updated=time.time())
    app = PickerApp(Path("/work/alpha"))
    async with app.run_test(size=WIDE) as pilot:
        await until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.sessions is not None, "rows")
        await pasted_shows_literally(pilot, app, "the picker's filter")
