"""Syntax colours follow the theme: a ``read`` result, an answer's code blocks and an edit's diff are coloured
in the app theme's palette, a theme switch recolours them, and highlighting costs nothing until it is drawn."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable

import pytest
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual.app import App

from chimera.core.events import MessageCompleted, RunStarted, StepEvent, TextDelta, ToolCallFinished, ToolCallStarted
from chimera.themes import CHIMERA_DARK, CHIMERA_LIGHT, THEMES
from chimera.tui import highlight
from chimera.tui.state import Transcript
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.tui_helpers import Harness, screen_text

PYTHON = ["import os", "", "def answer(x):", '    """Say it."""', "    return 42  # the answer"]
DONE = {"role": "assistant", "content": []}


def numbered(lines: list[str]) -> str:
    """What the read tool returns for ``lines`` (core/tools/read.py): a number, a tab, the line."""
    return "".join(f"{n:>6}\t{line}\n" for n, line in enumerate(lines, 1))


def a_read(path: str, output: str, call: str = "r1") -> list[StepEvent]:
    args = {"path": path}
    return [
        ToolCallStarted(call_id=call, name="read", args=args),
        ToolCallFinished(call_id=call, name="read", args=args, is_error=False, duration_ms=3, output=output),
    ]


def with_events(*events: StepEvent, unfold: bool = True) -> Harness:
    transcript = Transcript()
    transcript.apply(RunStarted(task="look", model="m", loop="react"))
    transcript.apply_all(events)
    if unfold:
        transcript.fold_all(False)
    return Harness(transcript)


def palette(theme_name: str, role: str) -> str:
    theme = next(theme for theme in THEMES if theme.name == theme_name)
    return str(theme.to_color_system().generate()[role]).lower()


def style_at(app: App[None], needle: str) -> Style | None:
    """The style of the first character of ``needle`` where the screen first shows it (None if it does not)."""
    for strip in app.screen._compositor.render_strips():
        text = strip.text
        found = text.find(needle)
        if found < 0:
            continue
        cell = 0
        for segment in strip:
            if cell + len(segment.text) > found:
                return segment.style
            cell += len(segment.text)
    return None


def colour(style: Style | None) -> str | None:
    """A style's foreground as ``#rrggbb`` (None when it has none)."""
    if style is None or style.color is None or style.color.triplet is None:
        return None
    return style.color.triplet.hex


def plain_colour(app: App[None]) -> str | None:
    """The view's own text colour: what words no highlighter touched are drawn in."""
    return colour(app.query_one(TranscriptView).rich_style)


def is_plain(app: App[None], style: Style | None) -> bool:
    return colour(style) in (None, plain_colour(app))


def is_dim(app: App[None], style: Style | None) -> bool:
    """Drawn dim: flagged so, or (as Textual draws dim text) in the text colour faded toward the background."""
    if style is None:
        return False
    if style.dim:
        return True
    view = app.query_one(TranscriptView).rich_style
    shown, text, ground = (c.triplet if c is not None else None for c in (style.color, view.color, view.bgcolor))
    if shown is None or text is None or ground is None or shown == text:
        return False
    return all(min(t, g) <= c <= max(t, g) for c, t, g in zip(shown, text, ground, strict=True))


async def until(pilot: object, condition: Callable[[], bool], seconds: float = 5.0) -> None:
    """Let the app run until ``condition`` holds, failing after ``seconds``."""
    deadline = asyncio.get_running_loop().time() + seconds
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "the screen never showed it"
        await pilot.pause()  # type: ignore[attr-defined]


async def test_a_python_read_shows_keywords_in_the_themes_keyword_colour() -> None:
    app = with_events(*a_read("src/answer.py", numbered(PYTHON)))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: style_at(app, "def answer") is not None)
        secondary = palette(CHIMERA_DARK.name, "secondary")
        assert colour(style_at(app, "def answer")) == secondary  # a keyword
        assert colour(style_at(app, "import os")) == secondary
        assert colour(style_at(app, "answer(x)")) == palette(CHIMERA_DARK.name, "primary")  # a function's name
        assert colour(style_at(app, "42")) == palette(CHIMERA_DARK.name, "warning")  # a number
        assert colour(style_at(app, '"""Say')) == palette(CHIMERA_DARK.name, "success")  # a string
        numbers = style_at(app, "     3")
        assert is_dim(app, numbers)  # the line numbers stay dim, in no colour of their own


@pytest.mark.parametrize("path", ["notes.unknownext", "notes.txt", "Nameless"])
async def test_a_file_with_no_known_lexer_is_plain(path: str) -> None:
    app = with_events(*a_read(path, numbered(PYTHON)))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "def answer" in screen_text(app))
        assert is_plain(app, style_at(app, "def answer"))
        assert is_plain(app, style_at(app, "42"))
        assert is_dim(app, style_at(app, "     3"))  # the numbers are dim as in any read


async def test_switching_the_theme_recolours_the_code_on_screen() -> None:
    assert palette(CHIMERA_DARK.name, "secondary") != palette(CHIMERA_LIGHT.name, "secondary")
    app = with_events(*a_read("src/answer.py", numbered(PYTHON)))
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        dark = palette(CHIMERA_DARK.name, "secondary")
        await until(pilot, lambda: colour(style_at(app, "def answer")) == dark)
        await pilot.pause()
        shown, height = screen_text(app), view.virtual_size.height
        app.theme = CHIMERA_LIGHT.name
        light = palette(CHIMERA_LIGHT.name, "secondary")
        await until(pilot, lambda: colour(style_at(app, "def answer")) == light)
        assert (screen_text(app), view.virtual_size.height) == (shown, height)  # recoloured where it stands
        app.theme = CHIMERA_DARK.name
        await until(pilot, lambda: colour(style_at(app, "def answer")) == dark)


async def test_a_folded_read_never_calls_the_highlighter(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    lex = highlight._colour_lines

    def counted(*args: object, **kwargs: object) -> object:
        calls.append(1)
        return lex(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(highlight, "_colour_lines", counted)
    highlight._numbered.cache_clear()  # what an earlier test lexed is not lexed again
    big = numbered([f"def f{n}(x):  return {n}" for n in range(2_000)])
    app = with_events(*a_read("src/big.py", big), *a_read("src/other.py", big, "r2"), unfold=False)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)
        await until(pilot, lambda: "▸ ✓ read  src/other.py" in screen_text(app))
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        assert calls == []  # on screen, folded: not highlighted
        await pilot.press("up", "enter")  # unfold the last read
        await until(pilot, lambda: colour(style_at(app, "def f0")) == palette(CHIMERA_DARK.name, "secondary"))
        assert len(calls) == 1  # the one unfolded, once; the other stays folded and untouched


async def test_a_python_block_streams_plain_and_is_coloured_once_finished() -> None:
    secondary = palette(CHIMERA_DARK.name, "secondary")
    transcript = Transcript()
    transcript.apply(RunStarted(task="write", model="m", loop="react"))
    app = Harness(transcript)
    async with app.run_test(size=(80, 24)) as pilot:
        view = app.query_one(TranscriptView)

        def stream(text: str) -> None:
            transcript.apply(TextDelta(text=text))
            view.refresh_entries()

        stream("Here:\n\n```python\ndef first():\n")
        await until(pilot, lambda: "def first" in screen_text(app))
        assert is_plain(app, style_at(app, "def first"))  # the open block: plain while it streams
        stream("    return 1\n```\n\nAnd:\n\n```python\ndef second():\n")
        await until(pilot, lambda: "def second" in screen_text(app))
        assert colour(style_at(app, "def first")) == secondary  # finished, still streaming: coloured
        assert is_plain(app, style_at(app, "def second"))
        stream("    pass\n```\n")
        transcript.apply(MessageCompleted(message=DONE, stop_reason="end_turn"))
        view.refresh_entries()
        await until(pilot, lambda: colour(style_at(app, "def second")) == secondary)  # the answer is complete
        assert colour(style_at(app, "def first")) == secondary


async def test_an_edits_diff_is_coloured_in_the_themes_colours() -> None:
    diff = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old line\n+new line\n"
    args = {"path": "x.py", "old": "old line", "new": "new line"}
    app = with_events(
        ToolCallStarted(call_id="e1", name="edit", args=args),
        ToolCallFinished(
            call_id="e1", name="edit", args=args, is_error=False, duration_ms=2, output="ok", data={"diff": diff}
        ),
    )
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "+new line" in screen_text(app))
        added, removed = (CHIMERA_DARK.variables[f"transcript-diff-{side}"].lower() for side in ("added", "removed"))
        assert colour(style_at(app, "+new line")) == added  # the theme's [transcript] diff colours
        assert colour(style_at(app, "-old line")) == removed


async def test_escape_sequences_in_coloured_code_stay_visible_and_inert() -> None:
    hostile = ["x = 1", "print('\x1b[2J\x1b]52;c;aGk=\x07')", "\x9b31m = 2"]
    answer = "```python\nx = '\x1b[31m'\n```\n"
    app = with_events(
        *a_read("evil.py", numbered(hostile)),
        TextDelta(text=answer),
        MessageCompleted(message=DONE, stop_reason="end_turn"),
    )
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: "\\x1b[2J" in screen_text(app) and "x = '\\x1b[31m'" in screen_text(app))
        assert "\\x9b31m" in screen_text(app)
        for strip in app.screen._compositor.render_strips():
            assert not any(ch in segment.text for segment in strip for ch in "\x1b\x9b\x07")


def test_the_cost_is_capped_long_lines_and_big_reads_stay_plain() -> None:
    syntax = highlight.syntax_theme(CHIMERA_DARK)
    long_line = "x = '" + "a" * highlight.LONG_LINE + "'"
    drawn = highlight.highlight_read(numbered(["def f():", long_line, "y = 2"]), "m.py", syntax)
    assert drawn is not None
    coloured = [stretches for _, _, stretches in drawn.lines]
    assert coloured[1] == []  # the long line is plain
    assert coloured[0]  # the lines around it are coloured
    assert coloured[2]
    huge = highlight.highlight_read(numbered(["x = 1"] * (highlight.MAX_CHARS // 10)), "m.py", syntax)
    assert huge is not None
    assert all(stretches == [] for _, _, stretches in huge.lines)  # too much to colour: plain


def test_coloured_lines_wrap_as_plain_text_does() -> None:
    rows = ["def f(x):", "\tif x:\t# a tab", "    s = '日本語' * 3", "a\tb\tc", "y" * 70, "word " * 20, ""]
    output = numbered(rows) + "[... more lines follow: read again with offset=8 ...]"
    console = Console(width=60)
    options = console.options.update_width(50)
    coloured = highlight.highlight_read(output, "f.py", highlight.syntax_theme(CHIMERA_DARK))
    assert coloured is not None

    def lines(renderable: object) -> list[str]:
        drawn = console.render_lines(renderable, options, pad=False)  # type: ignore[arg-type]
        return ["".join(segment.text for segment in line).rstrip() for line in drawn]

    assert lines(coloured) == lines(Text(output))


def test_an_answer_is_drawn_as_richs_markdown_draws_it() -> None:
    """The workbench's Markdown (its parser made once) draws an answer's headings, lists, links, tables,
    struck and inline code exactly as Rich's own Markdown does."""
    from rich.console import Console
    from rich.markdown import Markdown

    from chimera.tui.code_markdown import code_markdown
    from chimera.tui.look import default_look

    answer = (
        "# Done\n\nI changed **two** things in `parser.py` and ~~one~~ none else:\n\n"
        "1. the tokenizer, see https://example.com/docs and [the spec](https://example.com/spec)\n"
        "2. its tests\n   - a nested point\n\n> a quote\n\n| file | lines |\n|---|---|\n| a.py | 3 |\n\n---\n\nThe end."
    )
    console = Console(width=60, record=True, color_system="truecolor")
    console.print(Markdown(answer))
    theirs = re.sub(r"id=\d+;", "", console.export_text(styles=True))  # a link's id is new each time it is drawn
    console.print(code_markdown(answer, default_look().syntax))
    assert re.sub(r"id=\d+;", "", console.export_text(styles=True)) == theirs
