"""Provides ``QuickScrollBar``: a vertical scrollbar drawn straight into strips, kept until it changes.

Textual draws a scrollbar as a Rich renderable, through the generic path every widget takes
(rendered to segments, split into lines, styled and cached line by line): about 2.5 ms for a
bar 40 rows high. While a reply streams, the conversation grows a line at a time and its bar
moves with it, several times a second, so that path was one of the larger costs of a
streaming frame. The same bar, its glyphs worked out by Textual's own ``ScrollBarRender``, is
kept here as strips, one a row, and drawn again only when its size, position, extent or
colours change.
"""

from __future__ import annotations

from math import ceil

from rich.color import Color
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.scrollbar import ScrollBar, ScrollBarRender
from textual.strip import Strip

__all__ = ["QuickScrollBar"]


class QuickScrollBar(ScrollBar):
    """A vertical :class:`ScrollBar` whose rows are kept as strips between changes."""

    _drawn: tuple[object, list[Strip]] | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        drawn = self.render()  # Textual's bar for this state: its colours (hovered, grabbed, at rest)
        style = drawn.style if isinstance(drawn, ScrollBarRender) and isinstance(drawn.style, Style) else Style()
        width, height = self.size
        window = self.window_size if self.window_size < self.window_virtual_size else 0
        under = self.rich_style  # the widget's own colours, under the bar's (as Textual's drawing puts them)
        key = (width, height, ceil(self.window_virtual_size), ceil(window), self.position, style, under)
        if self._drawn is None or self._drawn[0] != key:
            strips = self._strips(style, width, height, ceil(self.window_virtual_size), ceil(window))
            self._drawn = (key, [strip.apply_style(under) for strip in strips])
        strips = self._drawn[1]
        return [strip.crop(crop.x, crop.right) for strip in strips[crop.y : crop.bottom]]

    def _strips(self, style: Style, width: int, height: int, virtual: int, window: int) -> list[Strip]:
        bar = self.renderer.render_bar(
            size=height,
            virtual_size=virtual,
            window_size=window,
            position=self.position,
            thickness=width,
            vertical=True,
            back_color=style.bgcolor or Color.default(),  # Rich colours, as Textual passes them (the theme's)
            bar_color=style.color or Color.default(),
        )
        rows: list[Segment] = list(bar.segments)
        return [Strip([row], width) for row in rows[:height]]
