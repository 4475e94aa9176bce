"""Provides ``SessionList``: sessions two lines each, drawn line by line, with a cursor.

A line-API scroll view (as ``TranscriptView`` is): every row is two lines, the
session's title and id, then how its last run ended, when it last changed, its
turns and its workspace; only the lines on screen are drawn, so a list of
10,000 sessions costs what a list of 20 does. Everything shown comes from the
catalog, which anyone could have written: each text is shown with every
character that could steer the terminal as an escape (``terminal_safe``), and
as plain text, never markup. Its colours are its component classes', from the
theme. ``up``/``down``, ``pageup``/``pagedown`` (bound by the screen holding it,
so they work while typing a filter) move the cursor; a click puts the cursor on
a row, and a click on the row under the cursor chooses it (:class:`Chosen`).
"""

from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chimera.core.sessions.catalog import CatalogEntry
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import plural

__all__ = ["ROW_LINES", "SessionList", "age"]

ROW_LINES = 2
_GUTTER = 2  # the cursor's mark
_ENDING_CLASS = {
    "finished": "session-list--finished",
    "failed": "session-list--failed",
}  # interrupted, cancelled, unfinished: stopped


def age(seconds: float, when: float) -> str:
    """How long ago something was, as a person says it: ``just now``, ``5 min ago``, ``3 h ago``,
    ``yesterday``, ``4 days ago``, then its date (``when``, a time)."""
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    days = int(seconds // 86400)
    if days == 1:
        return "yesterday"
    if days < 7:
        return f"{days} days ago"
    return dt.datetime.fromtimestamp(when).strftime("%Y-%m-%d")


class SessionList(ScrollView, can_focus=False):
    """Sessions to choose from; :meth:`show` gives it the rows, :attr:`chosen` is the one under the cursor."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "session-list--title",
        "session-list--details",
        "session-list--cursor",
        "session-list--finished",
        "session-list--failed",
        "session-list--stopped",
    }

    DEFAULT_CSS = """
    SessionList {
        height: 1fr;
        scrollbar-size-vertical: 1;
        scrollbar-gutter: stable;
    }
    SessionList > .session-list--title {
        text-style: bold;
    }
    SessionList > .session-list--details {
        color: $text-muted;
    }
    SessionList > .session-list--cursor {
        background: $block-cursor-background;
        color: $block-cursor-foreground;
    }
    SessionList > .session-list--finished {
        color: $success;
    }
    SessionList > .session-list--failed {
        color: $error;
    }
    SessionList > .session-list--stopped {
        color: $warning;
    }
    """

    class Chosen(Message):
        """The person chose the session under the cursor (a click on it)."""

        def __init__(self, session_id: str) -> None:
            super().__init__()
            self.session_id = session_id

    def __init__(self, *, clock: Callable[[], float] = time.time, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: Sequence[CatalogEntry] = ()
        self.cursor = 0
        self._clock = clock
        self._now = clock()
        self._home = os.path.expanduser("~")
        self._cache: dict[tuple[int, int, int, bool], Strip] = {}  # (row, line, width, under the cursor)
        self._styles: dict[str, Style] = {}  # by component class ("": the list's own), worked out once a theme

    def show(self, rows: Sequence[CatalogEntry]) -> None:
        """List ``rows``, the cursor on the first."""
        self.rows = rows
        self.cursor = 0
        self._now = self._clock()
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(rows) * ROW_LINES)
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def chosen(self) -> CatalogEntry | None:
        """The session under the cursor (None: the list is empty)."""
        return self.rows[self.cursor] if self.rows else None

    def move(self, rows: int) -> None:
        """Move the cursor by ``rows`` (stopping at either end) and keep it in view."""
        if not self.rows:
            return
        self.cursor = max(0, min(len(self.rows) - 1, self.cursor + rows))
        self.scroll_to_region(Region(0, self.cursor * ROW_LINES, 1, ROW_LINES), animate=False, immediate=True)
        self.refresh()

    def page(self, pages: int) -> None:
        """Move the cursor by ``pages`` screens of rows."""
        self.move(pages * max(1, self.scrollable_content_region.height // ROW_LINES))

    def on_resize(self, _: events.Resize) -> None:
        self._cache.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows) * ROW_LINES)

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on the row under it; on the row already under the cursor, chooses it."""
        row = (event.y + self.scroll_offset.y) // ROW_LINES
        if not 0 <= row < len(self.rows):
            return
        if row == self.cursor:
            self.post_message(self.Chosen(self.rows[row].id))
        else:
            self.move(row - self.cursor)

    def on_mount(self) -> None:
        self.app.theme_changed_signal.subscribe(self, self._recolour)

    def _recolour(self, _: object) -> None:
        """Another theme: the styles are worked out again at the next frame, and every line drawn again."""
        self._styles = {}
        self._cache.clear()
        self.refresh()

    def _work_out_styles(self) -> dict[str, Style]:
        """Each part's style ("": the list's own), and for the row under the cursor its own colours, the
        title only bold (``cursor:`` names)."""
        styles = {name: self.get_component_rich_style(name) for name in self.COMPONENT_CLASSES}
        styles[""] = self.rich_style
        cursor = self.rich_style + styles["session-list--cursor"]
        styles["cursor:"] = cursor
        bold = self.get_component_rich_style("session-list--title", partial=True)
        styles["cursor:session-list--title"] = cursor + bold
        return styles

    def render_line(self, y: int) -> Strip:
        line = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        row, part = divmod(line, ROW_LINES)
        if not 0 <= row < len(self.rows):
            return Strip.blank(width, self._style(""))
        key = (row, part, width, row == self.cursor)
        strip = self._cache.get(key)
        if strip is None:
            strip = self._cache[key] = self._draw(self.rows[row], part, width, under_cursor=key[3])
        return strip

    def _style(self, name: str, *, cursor: bool = False) -> Style:
        """The style of part ``name``; on the cursor's row, the cursor's colours (the title bold)."""
        if not self._styles:
            self._styles = self._work_out_styles()
        if cursor:
            return self._styles.get(f"cursor:{name}", self._styles["cursor:"])
        return self._styles[name]

    def _draw(self, entry: CatalogEntry, part: int, width: int, *, under_cursor: bool) -> Strip:
        base = self._style("", cursor=under_cursor)
        room = max(0, width - _GUTTER)
        if part == 0:
            text = self._title(entry, room, cursor=under_cursor)
        else:
            text = self._details(entry, cursor=under_cursor)
            text.truncate(room, overflow="ellipsis")
        mark = "▌ " if under_cursor and part == 0 else "  "
        segments = list(Text(mark).append_text(text).render(self.app.console))
        return Strip(segments).apply_style(base).crop_extend(0, width, base)

    def _title(self, entry: CatalogEntry, room: int, *, cursor: bool) -> Text:
        """The title, and the id at the right end (the title gives way first)."""
        ident = terminal_safe(entry.id, one_line=True)
        title = Text(terminal_safe(entry.title, one_line=True), self._style("session-list--title", cursor=cursor))
        title.truncate(max(0, room - len(ident) - 2), overflow="ellipsis")
        gap = max(1, room - title.cell_len - len(ident))
        return Text.assemble(title, " " * gap, (ident, self._style("session-list--details", cursor=cursor)))

    def _details(self, entry: CatalogEntry, *, cursor: bool) -> Text:
        muted = self._style("session-list--details", cursor=cursor)
        text = Text(no_wrap=True, end="")
        if entry.ending is not None:
            ending = terminal_safe(entry.ending.brief, one_line=True)
            state = _ENDING_CLASS.get(entry.ending.state, "session-list--stopped")
            text.append(ending, self._style(state, cursor=cursor))
        else:
            text.append("no run yet", muted)
        workdir = entry.workdir
        if workdir == self._home or workdir.startswith(self._home + os.sep):
            workdir = "~" + workdir[len(self._home) :]
        details = [
            age(max(0.0, self._now - entry.updated), entry.updated),
            plural(entry.turns, "turn"),
            terminal_safe(workdir, one_line=True),
        ]
        text.append("".join(f" · {item}" for item in details), muted)
        return text
