"""Provides ``SavedOutputView``: a tool call's saved full output, scrolled line by line however big it is.

The file (up to the 256 MB a call may save) is never read whole: a thread
finds where its lines start, a block at a time, and the view grows as it
does, so the first screen shows at once. Only the lines on screen are read,
decoded, made safe for the terminal (``terminal_safe``: no escape sequence
in a command's output reaches it) and drawn.

The file is read with ``pread``, never mapped: a file that shrinks while it
is shown (saved again, cut by someone) would kill a process touching a
mapped page past its new end (SIGBUS); a read past the end only comes back
short, and the lines that are gone show empty. A file that cannot be opened
shows one line saying why.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from array import array
from pathlib import Path

from rich.segment import Segment
from textual import work
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from chimera.core.terminal_text import terminal_safe

__all__ = ["SavedOutputView"]

_BLOCK = 4 * 1024 * 1024  # bytes indexed between two updates of the view
_WIDEST = 2_000  # cells a line may scroll sideways to; longer lines end in an ellipsis
_NEWLINE = re.compile(rb"\n")


class SavedOutputView(ScrollView, can_focus=True):
    """The lines of one file, read only as they are shown."""

    DEFAULT_CSS = """
    SavedOutputView {
        height: 1fr;
        padding: 0 1;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, path: Path, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.path = path
        self.starts = array("q", [0])  # where each line begins, as far as indexed
        self.indexed = False
        self.problem = ""  # why the file could not be shown, when it could not
        self._fd: int | None = None
        self._gone = threading.Event()  # the view is gone: the index thread stops at its next block
        self._length = 0
        self._widest = 1
        self._at_end = False  # the person went to the end: it stays there while the file is still being indexed

    def on_mount(self) -> None:
        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, ValueError) as err:  # swapped for a link, gone, a name no file can have
            self._cannot_show(getattr(err, "strerror", None) or str(err))
            return
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            os.close(fd)
            self._cannot_show("it is not a regular file")
            return
        self._fd, self._length = fd, info.st_size
        self._index(os.dup(fd))  # the thread's own descriptor: closing this one never pulls it away

    def _cannot_show(self, why: str) -> None:
        self.problem = f"cannot show {self.path}: {why}"
        self._length = len(self.problem.encode())
        self.virtual_size = Size(len(self.problem) + 1, 1)
        self.indexed = True
        self.refresh()

    def on_unmount(self) -> None:
        self._gone.set()
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    @property
    def line_count(self) -> int:
        """Lines found so far (a file that ends in a newline has no empty line after it)."""
        return len(self.starts) - (self.starts[-1] >= self._length)

    @work(thread=True, exclusive=True, exit_on_error=False)
    def _index(self, fd: int) -> None:
        """Find every line start, a block at a time, growing the view after each; ``fd`` is closed after."""
        try:
            done = 0
            while done < self._length:
                if self._gone.is_set():
                    return  # the screen closed
                block = os.pread(fd, min(self._length - done, _BLOCK), done)
                if not block:
                    break  # the file shrank: there is no more to find
                found = array("q", (done + m.end() for m in _NEWLINE.finditer(block)))
                widest = _widest_gap(self.starts[-1], found)
                self.app.call_from_thread(self._grow, found, widest)
                done += len(block)
        finally:
            os.close(fd)
        if not self._gone.is_set():
            self.app.call_from_thread(self._finish)

    def _grow(self, found: array[int], widest: int) -> None:
        self.starts.extend(found)
        self._widest = max(self._widest, min(widest, _WIDEST))
        self.virtual_size = Size(self._widest + 1, self.line_count)
        self._keep_at_end()
        self.refresh()

    def _finish(self) -> None:
        self.indexed = True
        self.virtual_size = Size(self._widest + 1, self.line_count)
        self._keep_at_end()
        self.refresh()

    def _keep_at_end(self) -> None:
        if self._at_end:
            self.scroll_end(animate=False, immediate=True, force=True)

    def action_scroll_end(self) -> None:
        """``end``: the last line, even while the file is still being indexed (the end follows it as it grows)."""
        self._at_end = True
        self.scroll_end(animate=False, immediate=True, force=True)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if new_value < old_value:  # the person went up from the end: it stays where they put it
            self._at_end = False

    def line(self, number: int) -> str:
        """Line ``number`` (from 0) as shown: decoded, tabs expanded, nothing that steers the terminal."""
        if self.problem:
            return self.problem if number == 0 else ""
        fd = self._fd
        if fd is None or not 0 <= number < self.line_count:
            return ""
        start = self.starts[number]
        end = self.starts[number + 1] if number + 1 < len(self.starts) else self._length
        try:
            raw = os.pread(fd, min(end, start + _WIDEST * 4) - start, start).rstrip(b"\r\n")
        except OSError:  # the file cannot be read any more: the line shows empty
            return ""
        text = terminal_safe(raw.decode("utf-8", "replace").expandtabs(), one_line=True)
        return text if end - start <= _WIDEST * 4 and len(text) <= _WIDEST else text[: _WIDEST - 1] + "…"

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        width = self.scrollable_content_region.width
        style = self.rich_style
        strip = Strip([Segment(self.line(scroll_y + y), style)])  # the view's colours, not the terminal's
        return strip.crop_extend(scroll_x, scroll_x + width, style)


def _widest_gap(previous: int, starts: array[int]) -> int:
    """The longest line among those that begin at ``previous`` and ``starts`` (in bytes, a bound on cells)."""
    widest = 0
    for start in starts:
        widest = max(widest, start - previous)
        previous = start
    return widest
