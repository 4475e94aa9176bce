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
        key = (width, height, ceil(self.window_virtual_size), ceil(window), self.position, style)
        if self._drawn is None or self._drawn[0] != key:  # a new theme changes the bar's colours: drawn again
            under = self.rich_style  # the widget's own colours, under the bar's (as Textual's drawing puts them)
            virtual = ceil(self.window_virtual_size)
            self._drawn = (key, self._strips(style, under, width, height, virtual, ceil(window)))
        strips = self._drawn[1][crop.y : crop.bottom]
        if crop.x == 0 and crop.right >= width:  # the whole width, as a bar one cell wide always is
            return strips
        return [strip.crop(crop.x, crop.right) for strip in strips]

    def _strips(self, style: Style, under: Style, width: int, height: int, virtual: int, window: int) -> list[Strip]:
        """The bar's rows: a strip for each kind of row (above the thumb, the thumb's ends and body, below),
        shared by the rows that look alike."""
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
        made: dict[Segment, Strip] = {}
        rows = []
        for row in list(bar.segments)[:height]:
            strip = made.get(row)
            if strip is None:
                strip = made[row] = Strip([Segment(row.text, under + row.style if row.style else under)], width)
            rows.append(strip)
        return rows
