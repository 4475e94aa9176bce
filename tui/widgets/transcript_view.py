"""Provides ``TranscriptView``: the transcript drawn line by line, one widget however long it is.

A line-API scroll view (as Textual's ``Log`` is): it knows where each entry's
lines start and draws only the lines on screen. Each entry's lines are
rendered once per width and version (``tui.state.Entry.version``) and kept
(``tui.entry_lines``, within a budget), so a new delta re-renders the entry it
changed and nothing else, and a resize re-wraps from the entries, not from
widgets. A change repaints the screen from the first entry it moved down. A cursor moves between entries
(``up``/``down``): ``enter`` or ``space`` folds and unfolds it, ``z`` folds or
unfolds everything, ``n`` jumps to the next failed call, ``o`` asks for a cut
call's whole saved output (:class:`TranscriptView.OpenOutput`). Every colour is
the app theme's (``tui.look``); a theme change, or the theme in use changed
on disk, draws the lines again (the layout stands: colours do not change how
many lines an entry takes).
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, ClassVar

from rich.console import RenderableType
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.selection import Selection
from textual.strip import Strip
from textual.theme import Theme

from chimera.tui.entry_lines import EntryLines, Laid, Line, same_lines
from chimera.tui.look import BOLD, Look, look_of
from chimera.tui.outside import tell
from chimera.tui.state import FOLDS, Entry, Transcript
from chimera.tui.widgets.quick_scrollbar import QuickScrollBar

if TYPE_CHECKING:
    from chimera.tui.highlight import ThemeSyntax

__all__ = ["TranscriptView"]

_GUTTER = 2  # cells left of every line: the cursor's mark
_CURSOR = "▌ "  # drawn in the theme's cursor colour
_BLANK = Segment("  ")


class TranscriptView(ScrollView, can_focus=True):
    """The conversation, drawn from a :class:`Transcript`; call :meth:`refresh_entries` after it changes."""

    DEFAULT_CSS = """
    TranscriptView {
        height: 1fr;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;  /* the width stays put when the scrollbar comes: nothing re-wraps */
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Previous", show=False),
        Binding("down,j", "move(1)", "Next", show=False),
        Binding("enter,space", "fold", "Fold/unfold"),
        Binding("z", "fold_all", "Fold/unfold all"),
        Binding("n", "next_failed", "Next failed call"),
        Binding("o", "open_output", "Full output"),
    ]

    class Left(Message):
        """The person left the timeline (``escape``): the focus goes back to where words are typed."""

    class TypedOn(Message):
        """A printable key the timeline does not take was pressed on it: the first of words typed, which go
        where words are typed, with the focus."""

        def __init__(self, character: str) -> None:
            super().__init__()
            self.character = character

    class Acted(Message):
        """``o`` is handled (its OpenOutput sent on, or why not said): keys typed behind it can go on."""

    class OpenOutput(Message):
        """The person asked for the whole saved output of a tool call (``o`` on it)."""

        def __init__(self, entry: Entry) -> None:
            super().__init__()
            self.entry = entry

    def __init__(self, transcript: Transcript | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.transcript = transcript if transcript is not None else Transcript()
        self.cursor: int | None = None
        self.entry_lines = EntryLines(self._draw, lambda: self.look)  # each entry's rendered lines
        self._starts: list[int] = []  # the first line of each entry
        self._laid: list[Laid] = []  # each entry's, at the last layout
        self._width = 0
        self._relayout_due = False
        self._follow = False  # the person sent something: the next layout shows the end, wherever the view was
        self._pinned = True  # the view shows the end (as of its last scroll): a resize keeps it there
        self._frame: tuple[Style, int, Selection | None] | None = None  # while a frame draws: style, width, selection
        self._look: Look | None = None  # the app theme's colours, made when first needed
        # line -> what it showed (its words, the cursor's mark, style, width, scroll) and the strip made of it:
        # a frame redraws every line it scrolls, and most show what they showed
        self._strips: dict[int, tuple[Line, bool, Style, int, int, Strip]] = {}
        self.lines_drawn = 0  # lines drawn anew (not as they were last drawn), for counting what a frame costs

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        """The scrollbar, a :class:`QuickScrollBar` (made as Textual makes its own: hidden, then started)."""
        if self._vertical_scrollbar is None:
            bar = QuickScrollBar(vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self._vertical_scrollbar = bar
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def _recolour(self, theme: Theme) -> None:
        """The theme changed (or the one in use was changed): every line is drawn again in its colours."""
        self._look = None
        self.entry_lines.recolour()
        self._strips.clear()
        self.refresh()

    @property
    def look(self) -> Look:
        """The colours the transcript is drawn in: the app theme's."""
        if self._look is None:
            self._look = look_of(self.app.current_theme)
        return self._look

    @property
    def syntax(self) -> ThemeSyntax:
        """The syntax colours code is drawn in: the app theme's."""
        return self.look.syntax

    # --- layout -------------------------------------------------------------------------

    def refresh_entries(self) -> None:
        """The transcript changed: lay it out again (only changed entries are rendered) and redraw."""
        following = self._follow or self.scroll_offset.y >= self.max_scroll_y - 1  # at the end: stay there
        self._follow = False
        sized = self.scrollable_content_region.width > _GUTTER
        if following and sized:
            self._render_tail()
        self._layout()
        if following and sized:  # now, not after a refresh: the next frame shows the new end, not a frame later
            self.scroll_end(animate=False, immediate=True, force=True)  # force: the scrollbar may not be up yet
        elif following:  # not laid out yet: once it is
            self.call_after_refresh(self.scroll_end, animate=False, immediate=True)

    def follow(self) -> None:
        """The person sent a message: go to the end now and follow what comes, even from higher up."""
        self._follow = True
        self.scroll_end(animate=False, immediate=True, force=True)

    def _render_tail(self) -> None:
        """Render the last screenful of entries, so the end a following view scrolls to is exact, not estimated."""
        width = self.scrollable_content_region.width - _GUTTER
        height = self.scrollable_content_region.height
        lines = 0
        for entry in reversed(self.transcript.entries):
            lines += len(self.entry_lines.lines(entry, width)) + 1
            if lines >= height:
                break

    def on_resize(self) -> None:
        """A new size (the plan panel opening or folding beside or above, say): the end stays in view if it was."""
        pinned = self._pinned
        self._layout()
        if pinned:
            self.scroll_end(animate=False, immediate=True, force=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self._pinned = new_value >= self.max_scroll_y - 1

    def _layout(self) -> None:
        """Where each entry starts. An entry drawn at this width counts its real lines; one never drawn
        counts an estimate (made once a version), corrected when it first comes on screen (so a long
        history costs its visible part, not its length)."""
        if self.scrollable_content_region.width <= _GUTTER:
            return  # not laid out yet: a resize comes with the real width
        width = self.scrollable_content_region.width - _GUTTER
        self._width = width
        starts, line = [], 0
        laid = []
        for entry in self.transcript.entries:
            starts.append(line)
            cached = self.entry_lines.laid(entry, width)
            held = cached[1]
            line += (held if isinstance(held, int) else len(held)) + 1  # a blank line after each entry
            laid.append(cached)
        if len(self.entry_lines.by_entry) > len(laid):  # entries a retry took away
            self.entry_lines.keep_only(entry.serial for entry in self.transcript.entries)
        # The first entry laid out differently from last time: the lines above it are drawn as they were.
        pairs = enumerate(zip(laid, self._laid, strict=False))
        first = next((n for n, (now, was) in pairs if now is not was), None)
        if first is None and len(laid) != len(self._laid):
            first = min(len(laid), len(self._laid))
        was_laid, self._laid = self._laid, laid
        self._starts = starts
        self._relayout_due = False
        self._resize_virtually(Size(width + _GUTTER, line))
        if first is not None:
            self._refresh_from(starts[first] + same_lines(laid, was_laid, first) if first < len(starts) else line)

    def _refresh_from(self, top: int) -> None:
        """Repaint from line ``top`` of the transcript to the bottom of the screen."""
        scroll_y = self.scroll_offset.y
        start = max(top, scroll_y)
        count = scroll_y + self.scrollable_content_region.height - start
        if count > 0:
            self.refresh_lines(start, count)

    def _resize_virtually(self, size: Size) -> None:
        """A new virtual size. Setting ``virtual_size`` lays out the whole screen; when only the height
        changed nothing else on screen moves, so set it quietly and update the scrollbar (which lays out
        itself if it has to appear or go)."""
        if size.width != self.virtual_size.width:
            self.virtual_size = size
        elif size.height != self.virtual_size.height:
            self.set_reactive(TranscriptView.virtual_size, size)
            self._scroll_update(size)

    def _draw(self, renderable: RenderableType, width: int) -> list[Line]:
        """``renderable``'s lines at ``width``, its Markdown in the theme's colours rather than Rich's."""
        console = self.app.console
        with console.use_theme(self.look.markdown):
            rendered = console.render_lines(renderable, console.options.update_width(width), pad=False)
        return [tuple(segments) for segments in rendered] or [()]

    # --- drawing ------------------------------------------------------------------------

    def render_lines(self, crop: Region) -> list[Strip]:
        """A frame's lines. Their style, width and selection are the same for all of them: worked out once here,
        not per line (the widget's style alone costs ~50 µs to work out)."""
        self._frame = (self.rich_style, self.size.width, self.text_selection)  # the gutter too: a line fills its row
        bar = self.vertical_scrollbar if self.show_vertical_scrollbar else None
        if bar is not None and bar.position != self.scroll_y:  # it was hidden when the view last scrolled
            bar.position = self.scroll_y
        try:
            strips = [self.render_line(y) for y in crop.line_range]
        finally:
            self._frame = None
        # Straight from the lines kept (Textual's generic path makes a new strip of each line it redraws, and a
        # following view redraws every line each time it scrolls): the view has no border, padding or tint.
        filters = self.get_line_filters()
        if filters:
            background = self.background_colors[1]
            for line_filter in filters:
                strips = [strip.apply_filter(line_filter, background) for strip in strips]
        if crop.x or crop.right < self.size.width:
            strips = [strip.crop(crop.x, crop.right) for strip in strips]
        return strips

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        line = scroll_y + y
        style, width, selection = self._frame or (self.rich_style, self.size.width, self.text_selection)
        index = bisect_right(self._starts, line) - 1
        if index < 0 or not self.transcript.entries:
            return Strip.blank(width, style)
        entry = self.transcript.entries[index]
        lines = self.entry_lines.lines(entry, self._width)
        end = self._starts[index + 1] if index + 1 < len(self._starts) else self.virtual_size.height
        laid_out = end - self._starts[index] - 1
        if len(lines) != laid_out and not self._relayout_due:  # it was an estimate: correct the layout
            self._relayout_due = True
            self.call_after_refresh(self._correct)
        offset = line - self._starts[index]
        if offset >= len(lines):  # the blank line after the entry
            return Strip.blank(width, style)
        words, marked = lines[offset], index == self.cursor
        span = selection.get_span(line) if selection is not None else None
        shown = self._strips.get(line)
        if span is None and shown is not None and shown[0] is words and shown[1:5] == (marked, style, width, scroll_x):
            return shown[5]
        self.lines_drawn += 1
        content = Strip(words).apply_offsets(0, line)  # where a mouse press lands, for selecting text
        if span is not None:
            content = _selected(content, span, self.screen.get_component_rich_style("screen--selection"))
        gutter = Segment(_CURSOR, self.look["cursor"] + BOLD) if marked else _BLANK
        strip = Strip([gutter, *content]).apply_style(style)  # the view's colours under the words
        strip = strip.crop_extend(scroll_x, scroll_x + width, style)
        if span is None:
            if len(self._strips) > 4 * max(self.size.height, 10):  # lines long gone from the screen
                self._strips.clear()
            self._strips[line] = (words, marked, style, width, scroll_x, strip)
        return strip

    # --- selecting text -----------------------------------------------------------------

    @property
    def allow_select(self) -> bool:
        return True

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected text, as it is shown: each line's words, without the gutter."""
        first = selection.start.y if selection.start is not None else 0
        last = selection.end.y if selection.end is not None else self.virtual_size.height - 1
        picked = []
        for line in range(max(0, first), min(last, self.virtual_size.height - 1) + 1):
            span = selection.get_span(line)
            if span is not None:
                text = self._line_text(line)
                picked.append(text[span[0] :] if span[1] == -1 else text[span[0] : span[1]])
        return "\n".join(picked), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    def _line_text(self, line: int) -> str:
        index = bisect_right(self._starts, line) - 1
        if index < 0 or index >= len(self.transcript.entries):
            return ""
        lines = self.entry_lines.lines(self.transcript.entries[index], self._width)
        offset = line - self._starts[index]
        return "".join(segment.text for segment in lines[offset]).rstrip() if offset < len(lines) else ""

    # --- the mouse ----------------------------------------------------------------------

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the entry under it; on a fold arrow it also folds or unfolds it."""
        line = event.y + self.scroll_offset.y
        index = bisect_right(self._starts, line) - 1
        if not 0 <= index < len(self.transcript.entries):
            return
        self._go(index)
        if line == self._starts[index] and event.x < _GUTTER + 2:  # the gutter or the ▸/▾ of a fold
            self.action_fold()

    def on_key(self, event: events.Key) -> None:
        """``escape`` leaves the timeline; a printable key that no binding takes (its own, the screen's or the
        app's) is not dropped: it goes on, as a word's first letter, to where words are typed."""
        if event.key == "escape":
            event.stop()
            event.prevent_default()
            self.post_message(self.Left())
        elif event.is_printable and event.character and event.key not in self.screen.active_bindings:
            event.stop()
            event.prevent_default()
            self.post_message(self.TypedOn(event.character))

    def _correct(self) -> None:
        """Lay out again with the real heights of the entries just drawn, keeping the end in view if it was."""
        following = self.scroll_offset.y >= self.max_scroll_y - 1
        self._layout()
        if following:
            self.scroll_end(animate=False, immediate=True)

    # --- the cursor ---------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        count = len(self.transcript.entries)
        if not count:
            return
        current = self.cursor if self.cursor is not None else count
        self._go(min(count - 1, max(0, current + step)))

    def action_fold(self) -> None:
        if self.cursor is not None:
            self.transcript.toggle(self.cursor)
            self._layout()
            self._reveal(self.cursor)

    def action_fold_all(self) -> None:
        foldable = [e for e in self.transcript.entries if e.kind in FOLDS]
        self.transcript.fold_all(not all(e.folded for e in foldable))
        self._layout()

    def action_next_failed(self) -> None:
        found = self.transcript.next_failed(self.cursor if self.cursor is not None else -1)
        if found is None:
            tell(self, "No failed call in this conversation.", timeout=3)
        else:
            self._go(found)

    def action_open_output(self) -> None:
        if self.cursor is None or self.transcript.entries[self.cursor].kind != "tool":
            tell(self, "Move to a tool call first (up/down), then o shows its whole output.", timeout=4)
        else:
            self.post_message(self.OpenOutput(self.transcript.entries[self.cursor]))
        self.post_message(self.Acted())  # after OpenOutput: the viewer is open before the keys behind o go on

    def _go(self, index: int) -> None:
        self.cursor = index
        self._reveal(index)
        self.refresh()

    def _reveal(self, index: int) -> None:
        """Scroll so that the start of entry ``index`` is on screen."""
        top = self._starts[index]
        height = self.scrollable_content_region.height
        if top < self.scroll_offset.y or top >= self.scroll_offset.y + height:
            self.scroll_to(y=max(0, top - height // 3), animate=False, immediate=True)


def _selected(strip: Strip, span: tuple[int, int], style: Style) -> Strip:
    """``strip`` with the cells of ``span`` (end -1: to the end) drawn in the selection's style."""
    start, end = span
    end = strip.cell_length if end == -1 else min(end, strip.cell_length)
    if start >= end:
        return strip
    chosen = Strip(Segment.apply_style(strip.crop(start, end), post_style=style))
    return Strip.join([strip.crop(0, start), chosen, strip.crop(end, strip.cell_length)])
