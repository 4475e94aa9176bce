"""Every character on screen reads against its background in every built-in theme (WCAG contrast ratios).

Text (letters, digits, marks, the spinner) needs 4.5:1 (WCAG AA). The glyphs that draw borders, rules and
scroll bars (box drawing and block elements) are not text: they need 3:1, WCAG's ratio for the parts of an
interface. ``chimera-high-contrast`` holds every character at 7:1 (AAA), as the README says. A screen is read
as Textual renders it, cell by cell, its colours resolved (alpha, "auto", dim), in a workbench opened in the
theme chosen last; the colours the transcript draws with (``tui/look.py``) are checked for every key besides, on
each background they sit on.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from rich.style import Style
from textual.color import Color
from textual.filter import dim_color
from textual.pilot import Pilot
from textual.theme import Theme

from chimera.core.events import CompactionDone, ReminderInjected, SteeringDelivered, ToolCallFinished, ToolCallStarted
from chimera.core.sessions.start import RunOptions
from chimera.themes import CHIMERA_HIGH_CONTRAST, THEMES
from chimera.themes.choice import remember_theme
from chimera.themes.palette import TABLES, palette
from chimera.tui.app import build_app
from chimera.tui.look import look_of
from chimera.tui.replay_app import ReplayApp
from chimera.tui.screens.help import HelpScreen
from chimera.tui.screens.mcp import McpScreen
from chimera.tui.screens.sessions import SessionPicker
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.plan_panel import PlanPanel
from tests.catalog_helpers import write_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.lock_helpers import holding
from tests.mcp_helpers import fault_server
from tests.sandbox_helpers import needs_landlock
from tests.session_helpers import record_fixed_session
from tests.tui_helpers import answering, pictured, screen_text, send, still, until

SIZE = (120, 50)
AA, AAA, NON_TEXT = 4.5, 7.0, 3.0
RGB = tuple[int, int, int]
NAMES = [theme.name for theme in THEMES]
ANSWER = """## Fixed

`median` now averages the two middle values; see [the docs](https://docs.python.org/3/library/statistics.html).

> An even list has no middle value.

1. sorted the values
2. took the pair

```python
def median(xs: list[int]) -> float:
    # the middle pair of an even list
    return (xs[0] + xs[1]) / 2 if len(xs) % 2 == 0 else float("nan")
```
"""


def luminance(colour: RGB) -> float:
    """WCAG relative luminance of an sRGB colour."""

    def channel(value: int) -> float:
        c = value / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = colour
    return 0.2126 * channel(red) + 0.7152 * channel(green) + 0.0722 * channel(blue)


def contrast(one: RGB, other: RGB) -> float:
    """The WCAG contrast ratio of two colours (1 to 21)."""
    light, dark = sorted((luminance(one), luminance(other)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def needed(theme: str, char: str) -> float:
    """The contrast ``char`` needs in ``theme``: a line or block glyph (a border, a rule, a scroll bar) is not
    text."""
    if theme == CHIMERA_HIGH_CONTRAST.name:
        return AAA
    return NON_TEXT if "\u2500" <= char <= "\u259f" else AA


def _hex(colour: RGB) -> str:
    return "#{:02x}{:02x}{:02x}".format(*colour)


def _rgb(colour: Any) -> RGB:
    red, green, blue = colour.triplet
    return (red, green, blue)


def _colours(style: Style | None) -> tuple[RGB, RGB] | None:
    """A cell's foreground and background as the terminal shows them; None when either is left to the terminal."""
    if style is None or style.color is None or style.bgcolor is None:
        return None
    if style.color.triplet is None or style.bgcolor.triplet is None:
        return None
    fore, back = style.color, style.bgcolor
    if style.dim:  # dim left to the terminal: drawn as Textual draws dim itself, faded toward the background
        fore = dim_color(back, fore)
    return (_rgb(back), _rgb(fore)) if style.reverse else (_rgb(fore), _rgb(back))


def hard_to_read(app: Any, theme: str) -> set[str]:
    """Every run of characters on ``app``'s screen below the contrast it needs in ``theme``, with its colours."""
    found: set[str] = set()
    for row, strip in enumerate(app.screen._compositor.render_strips()):
        for segment in strip:
            if segment.control or not segment.text.strip():
                continue
            words = segment.text.strip()[:50]
            colours = _colours(segment.style)
            if colours is None:
                found.add(f"row {row}: {words!r} in the terminal's own colours, not the theme's")
                continue
            ratio = contrast(*colours)
            short = [char for char in segment.text if not char.isspace() and ratio < needed(theme, char)]
            if short:
                fore, back = map(_hex, colours)
                found.add(f"row {row}: {words!r} {fore} on {back} is {ratio:.2f}:1, needs {needed(theme, short[0])}")
    return found


class Screens:
    """What each screen of a workbench opened in ``theme`` left hard to read."""

    def __init__(self, home: Path, theme: str) -> None:
        remember_theme(home, theme)  # the theme the next workbench opens in
        self.theme = theme
        self.failures: list[str] = []

    def read(self, app: Any, name: str) -> None:
        """What the screen, named ``name`` in a failure, shows now."""
        self.failures += [f"{name}: {line}" for line in sorted(hard_to_read(app, self.theme))]

    def check(self) -> None:
        assert not self.failures, f"hard to read in {self.theme}:\n" + "\n".join(self.failures)


# --- screens ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("theme", NAMES)
@pytest.mark.usefixtures("model_env")
async def test_a_run_reads_in_every_theme(api: FakeAnthropic, project: Path, isolated_env: Path, theme: str) -> None:
    """The welcome and the input's placeholder, the help, completions, a question with a diff, then every kind of
    entry in the conversation (steering, calls by status, notices by level, Markdown and code), the timeline's
    cursor and the session tree: all of it readable, with the status line and the footer under it."""
    screens = Screens(isolated_env, theme)
    (project / "stats.py").write_text("def median(xs):\n    return xs[len(xs) // 2]\n")
    change = {"path": "stats.py", "old": "xs[len(xs) // 2]", "new": "sorted(xs)[len(xs) // 2]"}
    api.script(message(tool_use("e1", "edit", change), stop_reason="tool_use"), message(text(ANSWER)))
    app = still(build_app(RunOptions(workdir=project, model=MODEL)))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "Tell Chimera" in screen_text(app), "the input's placeholder")
        screens.read(app, "the welcome")
        await pilot.press("f1")
        await until(pilot, lambda: isinstance(app.screen, HelpScreen) and "/quit" in screen_text(app), "the help")
        screens.read(app, "the help")
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, HelpScreen), "the help closed")
        await pilot.press("slash", "m", "o")
        await until(pilot, lambda: app.query_one(CompletionList).shown and "/mode" in screen_text(app), "completions")
        screens.read(app, "completions")
        await pilot.press("backspace", "backspace", "backspace")
        await send(pilot, "fix the median")
        await answering(pilot, app)
        await until(pilot, lambda: "y once · a always" in screen_text(app), "asked")
        await pictured(pilot, app)
        screens.read(app, "a question with a diff, the run working")
        await pilot.press("y")
        await app.run_shown.wait()
        every_kind_of_entry(app)
        await until(pilot, lambda: "a notice of level error" in screen_text(app), "every kind of entry")
        await pictured(pilot, app)
        screens.read(app, "the conversation")
        await pilot.press("tab")  # the timeline: its cursor's mark
        await pilot.pause()
        screens.read(app, "the timeline's cursor")
        await send(pilot, "/tree")
        await until(pilot, lambda: "You are here" in screen_text(app), "the session tree")
        screens.read(app, "the session tree")
    screens.check()


def every_kind_of_entry(app: Any) -> None:
    """Steering, a reminder, calls that ran, failed and were cancelled, a compaction and a notice of each level."""
    bus = app.session.bus
    bus.publish(SteeringDelivered(text="and keep the odd case"))
    bus.publish(ReminderInjected(text="You changed files: run the tests"))
    for call_id, status, error in (("b1", "ok", False), ("b2", "failed", True), ("b3", "cancelled", False)):
        args = {"command": f"pytest -q -k {status}"}
        bus.publish(ToolCallStarted(call_id=call_id, name="bash", args=args))
        bus.publish(
            ToolCallFinished(
                call_id=call_id, name="bash", args=args, is_error=error, duration_ms=5, output="1 passed", status=status
            )
        )
    bus.publish(CompactionDone(summary="the median fixed", tokens_before=9000, tokens_after=900))
    for severity in ("info", "success", "warning", "error"):
        app.conversation.say(f"a notice of level {severity}", severity)


@pytest.mark.parametrize("theme", NAMES)
@pytest.mark.usefixtures("model_env")
async def test_the_plan_reads_in_every_theme(api: FakeAnthropic, project: Path, isolated_env: Path, theme: str) -> None:
    """The plan proposed with its keys, then carried out: a step checked, a step whose check failed and passed."""
    screens = Screens(isolated_env, theme)
    steps = "- [ ] Read `stats.py`\n- [ ] Fix **median** for even lists\n- [ ] Run the tests"
    replies = ["Read it.", "DONE", "Fixed.", "NOT DONE: median([1, 2]) is still 1", "Fixed again.", "DONE"]
    api.script(message(text(steps)), *[message(text(t)) for t in [*replies, "Passed.", "DONE"]])
    app = still(build_app(RunOptions(workdir=project, model=MODEL, loop="plan", permission_mode="bypass")))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await send(pilot, "fix the median")
        await answering(pilot, app, PlanPanel)
        await until(pilot, lambda: "Run the tests" in screen_text(app), "plan")
        await pictured(pilot, app)
        screens.read(app, "the plan proposed")
        await pilot.press("a")
        await app.run_shown.wait()
        await until(pilot, lambda: "still 1" in screen_text(app), "the failed check")
        await pictured(pilot, app)
        screens.read(app, "the plan carried out")
    screens.check()


@pytest.mark.parametrize("theme", NAMES)
@pytest.mark.usefixtures("model_env")
async def test_a_resumed_session_and_the_picker_read_in_every_theme(
    api: FakeAnthropic, isolated_env: Path, tmp_path: Path, theme: str
) -> None:
    """A resumed session unfolded (thinking, a read with its line numbers, a failed test run, an edit's diff), then
    the session picker (/sessions): sessions finished and failed, their ages and places, the filter, the cursor."""
    screens = Screens(isolated_env, theme)
    session = record_fixed_session(isolated_env, tmp_path)
    write_session(isolated_env, "18c3d9e0f4a3b2c1", "/work/stats", "add a --json flag", updated=1.7e9, ending="failed")
    app = build_app(RunOptions(resume=session, model=MODEL))
    async with app.run_test(size=SIZE) as pilot:
        await app.history_shown.wait()
        await pilot.pause()
        screens.read(app, "the resumed session")
        await unfold_everything(pilot, app)
        screens.read(app, "the resumed session unfolded")
        await send(pilot, "/sessions")
        await until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.sessions is not None, "rows")
        await pilot.pause()
        screens.read(app, "the session picker")
        await pilot.press("down")
        await pilot.pause()
        screens.read(app, "the session picker, the cursor moved")
    screens.check()


@needs_landlock
@pytest.mark.parametrize("theme", NAMES)
@pytest.mark.usefixtures("model_env")
async def test_the_sandbox_mcp_and_a_held_workspace_read_in_every_theme(
    api: FakeAnthropic, project: Path, isolated_env: Path, tmp_path: Path, theme: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The status line saying `sandboxed` and `mcp 1/2` (and `not sandboxed`), the question whether to run a
    refused command again outside the sandbox, the /mcp panel with a ready server and a failed one in full, and
    the line saying the workbench waits for a workspace another process holds: all readable."""
    screens = Screens(isolated_env, theme)
    monkeypatch.delenv("CHIMERA_SANDBOX_WRITABLE", raising=False)
    command, args = fault_server()
    servers = {"faults": {"command": command, "args": list(args)}, "gone": {"command": "/nowhere/mcp-server"}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}))
    target = tmp_path / "outside.txt"
    api.script(message(tool_use("t1", "bash", {"command": f"echo x > {target}"}), stop_reason="tool_use"))
    api.script(message(text("Left as it was.")))
    options = RunOptions(workdir=project, model=MODEL, permission_mode="bypass", mcp_config=config)
    app = still(build_app(options))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.state.status.mcp == "mcp 1/2", "the servers counted")
        await until(pilot, lambda: {"· sandboxed ·", "· mcp 1/2 ·"} <= words(app), "the status line's words")
        screens.read(app, "the status line: sandboxed, mcp 1/2")
        await send(pilot, "write outside")
        await answering(pilot, app)
        await until(pilot, lambda: "outside the sandbox?" in screen_text(app), "the sandbox's question")
        await pictured(pilot, app)
        screens.read(app, "the sandbox's question")
        await pilot.press("n")
        await app.run_shown.wait()
        await send(pilot, "/mcp")
        await until(pilot, lambda: isinstance(app.screen, McpScreen) and "1 of 2 ready" in screen_text(app), "/mcp")
        screens.read(app, "the /mcp panel")
        await pilot.press("down")
        await until(pilot, lambda: "/nowhere/mcp-server" in screen_text(app), "the failed server in full")
        screens.read(app, "the /mcp panel, a failed server chosen")
    app = build_app(replace(options, sandbox="off", mcp_config=None))
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "· not sandboxed ·" in screen_text(app), "the status line's words")
        screens.read(app, "the status line: not sandboxed")
    with holding(project):
        app = build_app(replace(options, mcp_config=None), open_later=True)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: "Waiting for" in screen_text(app), "the wait shown")
            screens.read(app, "the wait for a workspace another process holds")
            await pilot.press("ctrl+q")
    screens.check()


def words(app: Any) -> set[str]:
    """The status line's parts as drawn, each between its separators (`· mcp 1/2 ·`)."""
    line = screen_text(app).splitlines()[-2]
    return {f"· {part.strip()} ·" for part in line.split("·")}


async def unfold_everything(pilot: Pilot[Any], app: Any) -> None:
    """Every entry of the conversation open, the cursor on the first."""
    view = app.query_one("#conversation")
    await pilot.press("tab")
    for index, entry in enumerate(app.transcript.entries):
        if entry.folded:
            view.cursor = index
            await pilot.press("enter")
    view.cursor = 0
    await until(pilot, lambda: not any(e.folded for e in app.transcript.entries), "everything unfolded")
    await pilot.pause()


@pytest.mark.parametrize("theme", NAMES)
async def test_a_replay_reads_in_every_theme(isolated_env: Path, tmp_path: Path, theme: str) -> None:
    """A replay paused after its first step: the replay's bar (its state and keys) over the conversation."""
    screens = Screens(isolated_env, theme)
    app = ReplayApp(record_fixed_session(isolated_env, tmp_path), paused=True)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: "fix the median" in screen_text(app), "the task")
        await pilot.press("s")
        await until(pilot, lambda: "pytest" in screen_text(app), "one step")
        await pilot.pause()
        screens.read(app, "the replay")
    screens.check()


# --- the transcript's colours -------------------------------------------------------------------------------


def backgrounds(theme: Theme) -> dict[str, RGB]:
    """The backgrounds the transcript's colours sit on: the view's, the question's and the code blocks'."""
    roles = theme.to_color_system().generate()
    return {name: Color.parse(roles[name]).rgb for name in ("background", "surface", "panel")}


@pytest.mark.parametrize("theme", THEMES, ids=NAMES)
def test_every_colour_of_the_transcript_reads_in_every_theme(theme: Theme) -> None:
    """Each [transcript] and [code] colour, and each style tui/look.py draws the transcript, its Markdown and its
    code with, on each background it can sit on (on its own background when it has one)."""
    look = look_of(theme)
    colours = palette(theme)
    drawn: dict[str, Style] = {key: Style(color=colour.rich_color) for key, colour in colours.items() if colour}
    drawn |= {f"look {key}": look[key] for key in TABLES["transcript"]}
    drawn |= {f"syntax {token}": style for token, style in look.syntax.styles.items() if style.color}
    drawn |= {f"markdown {name}": style for name, style in look.markdown.styles.items() if style.color}
    assert {f"{table}.{key}" for table, keys in TABLES.items() for key in keys} <= set(drawn)
    need = AAA if theme.name == CHIMERA_HIGH_CONTRAST.name else AA
    failures = []
    for key, style in drawn.items():
        assert style.color is not None, f"{key} has no colour of its own"
        assert style.color.triplet is not None, f"{key} is a terminal's colour"
        fore = _rgb(style.color)
        under = backgrounds(theme)
        if style.bgcolor is not None and style.bgcolor.triplet is not None:
            under = {"its own": _rgb(style.bgcolor)}
        for where, back in under.items():
            ratio = contrast(fore, back)
            if ratio < need:
                failures.append(f"{key} {_hex(fore)} on the {where} {_hex(back)}: {ratio:.2f}:1, needs {need}")
    assert not failures, f"hard to read in {theme.name}:\n" + "\n".join(failures)
