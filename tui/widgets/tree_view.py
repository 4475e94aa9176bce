"""Provides ``TreeView``: the lines of a session's tree (``core.sessions.tree_lines``) drawn one by one.

A line-API scroll view: it draws only the lines on screen, each from the line model when it is drawn, so
the first paint of a tree of thousands of lines costs the lines visible. It holds the cursor (an index
into the lines shown), the folds, the filter and the search; each change recomputes which lines show (a
pass over the laid-out lines, no reading of messages but for a search) and repaints. It takes no keys
itself: the tree panel moves it.
"""

from __future__ import annotations

from bisect import bisect_right

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chimera.core.sessions.tree_lines import FILTERS, TreeLine, TreeLines
from chimera.core.terminal_text import terminal_safe
from chimera.tui.look import BOLD, Look, look_of

__all__ = ["TreeView"]

_CURSOR = "▌ "


class TreeView(ScrollView):
    """The tree's lines, a cursor among them."""

    DEFAULT_CSS = """
    TreeView {
        height: 1fr;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.model: TreeLines | None = None
        self.shown: list[int] = []
        self.cursor = 0
        self.folded: set[int] = set()
        self.view = FILTERS[0]
        self.search_text = ""
        self._look: Look | None = None

    # --- what shows -----------------------------------------------------------------------

    def show_model(self, model: TreeLines, *, at: str | None = None) -> None:
        """Draw ``model``; the cursor on the line of node ``at`` (the leaf's by default)."""
        self.model, self.folded = model, set()
        self._refilter(at if at is not None else model.tree.leaf)

    @property
    def selected(self) -> TreeLine | None:
        """The line under the cursor (None: no line shows)."""
        if self.model is None or not self.shown:
            return None
        return self.model.lines[self.shown[self.cursor]]

    def _refilter(self, keep: str | None) -> None:
        """Which lines show now; the cursor stays on node ``keep`` when it still shows."""
        model = self.model
        if model is None:
            return
        self.shown = model.visible(self.folded, self.view, self.search_text)
        self.cursor = 0
        index = model.index_of(keep) if keep is not None else None
        if index is not None:
            # the nearest line shown at or above the node's (a fold may hide the node itself)
            self.cursor = max(0, bisect_right(self.shown, index) - 1)
        self.virtual_size = Size(self.size.width, len(self.shown))
        self._reveal()
        self.refresh()

    def move(self, step: int) -> None:
        if not self.shown:
            return
        self.cursor = max(0, min(len(self.shown) - 1, self.cursor + step))
        self._reveal()
        self.refresh()

    def go_to(self, position: int) -> None:
        self.move(position - self.cursor)

    def fold(self) -> None:
        """Fold the line under the cursor (its lines below hide), or unfold it."""
        line = self.selected
        if line is None or not line.foldable:
            return
        self.folded ^= {line.index}
        self._refilter(line.node)

    def set_view(self, view: str) -> None:
        line = self.selected
        self.view = view
        self._refilter(line.node if line else None)

    def search(self, query: str) -> None:
        line = self.selected
        self.search_text = query
        self._refilter(line.node if line else None)

    def _reveal(self) -> None:
        height = max(1, self.scrollable_content_region.height)
        top = int(self.scroll_y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False, immediate=True)
        elif self.cursor >= top + height:
            self.scroll_to(y=self.cursor - height + 1, animate=False, immediate=True)

    # --- drawing --------------------------------------------------------------------------

    @property
    def look(self) -> Look:
        if self._look is None or self._look.name != self.app.current_theme.name:
            self._look = look_of(self.app.current_theme)
        return self._look

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        row = scroll_y + y
        style = self.rich_style
        width = self.scrollable_content_region.width
        if self.model is None or row >= len(self.shown):
            return Strip.blank(width, style)
        segments = self._segments(self.model, self.model.lines[self.shown[row]], row == self.cursor)
        return Strip(segments).apply_style(style).crop_extend(scroll_x, scroll_x + width, style)

    def _segments(self, model: TreeLines, line: TreeLine, marked: bool) -> list[Segment]:
        look = self.look
        muted = look["muted"]
        who = model.who(line)
        fold = "▸ " if line.index in self.folded else "▾ " if model.tree.is_branch_point(line.node) else "  "
        mark = model.mark(line)
        names = model.names(line)
        segments = [
            Segment(_CURSOR, look["cursor"] + BOLD) if marked else Segment("  "),
            Segment(fold, muted),
            Segment(line.prefix, muted),
            Segment(mark + " ", look["marker"] + BOLD if line.active else muted),
            Segment(f"{who:<8} ", look["user"] + BOLD if who in {"you", "steering"} else muted),
            Segment(terminal_safe(model.text(line), one_line=True), Style(bold=marked)),
        ]
        if names:
            segments.append(Segment(terminal_safe(f"  [{', '.join(names)}]", one_line=True), look["heading"]))
        segments.append(Segment(f"  {model.age(line)}", muted))
        return segments
