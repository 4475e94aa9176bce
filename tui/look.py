"""Provides ``Look``: everything one theme gives the transcript to draw with, as Rich styles.

Each colour of the theme's ``[transcript]`` table (``chimera.themes.palette``)
as a style (``look["tool_failed"]``), the syntax colours of code
(``look.syntax``) and the Rich theme answers' Markdown is drawn under
(``look.markdown``: inline code, headings, links, quotes, list markers), so
nothing the transcript draws keeps a colour of Rich's own. ``look_of`` makes
one for a Textual theme; the view makes a new one when the theme changes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from rich.style import Style
from rich.theme import Theme as RichTheme
from textual.color import Color
from textual.theme import Theme

from chimera.themes import DEFAULT_THEME, THEMES
from chimera.themes.palette import TRANSCRIPT, palette

if TYPE_CHECKING:
    from chimera.tui.highlight import ThemeSyntax

__all__ = ["Look", "default_look", "look_of"]

BOLD = Style(bold=True)
ITALIC = Style(italic=True)


@dataclass(frozen=True, slots=True)
class Look:
    """One theme's styles for the transcript: ``look[key]`` for a ``[transcript]`` key (its colour alone;
    add attributes where drawn), ``syntax`` for code, ``markdown`` to draw answers under."""

    name: str
    styles: Mapping[str, Style]
    markdown: RichTheme
    theme: Theme
    _syntax: list[ThemeSyntax] = field(default_factory=list, compare=False, repr=False)  # made once, when asked

    def __getitem__(self, key: str) -> Style:
        return self.styles[key]

    @property
    def syntax(self) -> ThemeSyntax:
        """The theme's syntax colours for code, made the first time code is drawn (they take pygments and
        Rich's ``Syntax``, which the first frame has no use for)."""
        if not self._syntax:
            from chimera.tui.highlight import syntax_theme

            self._syntax.append(syntax_theme(self.theme))
        return self._syntax[0]


def look_of(theme: Theme) -> Look:
    """The look of the transcript in ``theme``."""
    colours = palette(theme)
    styles = {key: _style(colours[f"transcript.{key}"]) for key in TRANSCRIPT}
    panel = Color.parse(theme.to_color_system().generate()["panel"])
    on_panel = Style(bgcolor=panel.rich_color) if panel.a > 0 and panel.ansi is None else Style.null()
    heading, muted, marker = styles["heading"], styles["muted"], styles["list_marker"]
    markdown = {  # every style of Rich's Markdown that has a colour of its own
        "markdown.code": styles["inline_code"] + BOLD + on_panel,
        "markdown.code_block": on_panel,
        "markdown.block_quote": styles["quote"],
        "markdown.list": marker,
        "markdown.item.bullet": marker + BOLD,
        "markdown.item.number": marker,
        "markdown.hr": muted,
        "markdown.h2": heading + Style(underline=True),
        "markdown.h3": heading + BOLD,
        "markdown.h4": heading + ITALIC,
        "markdown.link": styles["link"],
        "markdown.link_url": styles["link"] + Style(underline=True),
        "markdown.table.border": muted,
        "markdown.table.header": heading,
        "markdown.kbd": styles["inline_code"] + BOLD,
    }
    return Look(theme.name, styles, RichTheme(markdown, inherit=False), theme)


def _style(colour: Color | None) -> Style:
    """A colour as a style; None (faded, in a theme of terminal colours) as dim."""
    return Style(dim=True) if colour is None else Style(color=colour.rich_color)


@cache
def default_look() -> Look:
    """The default theme's look, for drawing outside an app."""
    return look_of(next(theme for theme in THEMES if theme.name == DEFAULT_THEME))
