"""Every colour the workbench draws comes from the theme: no colour is written into ``tui/`` or the app stylesheet.

Two places a colour could hide: a Rich style string or argument in Python (``"bold red"``,
``Style(color="cyan")``, ``"#ff0000"``), and a Textual CSS declaration (``color: red;``
in a ``DEFAULT_CSS`` or a ``.tcss`` file). Colours belong in ``themes/*.toml``; CSS takes
theme variables (``$primary``, ``$text-muted``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from rich.errors import StyleSyntaxError
from rich.style import Style
from textual.color import Color, ColorParseError

ROOT = Path(__file__).resolve().parents[2]
NO_COLOUR = {"default", "none", "transparent", "initial", "auto"}  # words that name no colour of their own
_DECLARATION = re.compile(r"([a-z-]+)\s*:\s*([^;{}]+);")
_COLOURED_PROPERTY = re.compile(r"color|background|border|outline|tint|scrollbar")


def style_colours(text: str) -> list[str]:
    """The colours a Rich style string names (``"bold red on black"`` → red, black); none for prose."""
    if not text.strip() or text.strip().lower() in NO_COLOUR:
        return []
    try:
        style = Style.parse(text)
    except (StyleSyntaxError, ValueError):
        return []  # not a style: a message, a path, CSS
    return [str(colour.name) for colour in (style.color, style.bgcolor) if colour is not None and not colour.is_default]


def css_colours(css: str) -> list[str]:
    """The literal colours a block of Textual CSS declares (``color: red;``, ``border: tall #fff;``)."""
    found = []
    for prop, value in _DECLARATION.findall(css):
        if not _COLOURED_PROPERTY.search(prop):
            continue
        for word in value.split():
            if word.startswith("$") or word.endswith("%") or word.lower() in NO_COLOUR:
                continue
            try:
                Color.parse(word)
            except ColorParseError:
                continue  # a border's kind (tall, thick), a number
            found.append(f"{prop}: {value.strip()}")
    return found


def literal_colours(path: Path) -> list[str]:
    """Each literal colour in a Python file's strings, as ``file:line: text``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
            named = css_colours(text) if "{" in text else style_colours(text)
            found += [f"{path.relative_to(ROOT)}:{node.lineno}: {colour} in {text[:40]!r}" for colour in named]
    return found


def test_the_checks_find_colours_where_they_are() -> None:
    """The checks themselves: style strings, hex and CSS colours are found; prose and variables are not."""
    assert style_colours("bold red") == ["red"]
    assert style_colours("#FF0000") == ["#ff0000"]
    assert style_colours("dim italic") == []
    assert style_colours("the red line shows what failed") == []
    assert css_colours("Screen { color: red; border: tall #fff; }") == ["color: red", "border: tall #fff"]
    assert css_colours("Screen { color: $text; border: tall $primary 40%; background: $warning 15%; }") == []


def test_no_literal_colour_in_the_workbench() -> None:
    """No Python module in tui/ writes a colour (Rich styles, CSS): every one comes from the theme."""
    found = [line for path in sorted((ROOT / "tui").rglob("*.py")) for line in literal_colours(path)]
    assert found == []


def test_no_literal_colour_in_the_stylesheets() -> None:
    """The app stylesheet and any .tcss in tui/ use theme variables, never a colour."""
    sheets = [ROOT / "themes" / "app.tcss", *sorted((ROOT / "tui").rglob("*.tcss"))]
    found = [f"{sheet.name}: {colour}" for sheet in sheets for colour in css_colours(sheet.read_text())]
    assert found == []
