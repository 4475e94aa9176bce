"""Provides ``LiveOutput``: a running call's output, passed on a few times a second while the call runs.

A tool whose output comes over time (``bash``) gives each piece to ``write`` as
it arrives, already masked: :class:`~chimera.core.tools.output.OutputSink`
masks secrets as a stream and holds back an end that could begin one, so no
piece holds part of a secret. Pieces are gathered and passed on together, at
most once every ``INTERVAL`` seconds (the first time ``INTERVAL`` after the
call began, so a quick command passes nothing on). What waits is bounded: past
``MAX_DELTA`` characters the oldest is dropped (from a line's start when one
is left) and counted, so a command that prints 100 MB costs a few small
events. This is a view for the person watching, not a record: what arrived in
the last moments of the call is not passed on, as the call's result holds all
of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

__all__ = ["INTERVAL", "MAX_DELTA", "LiveOutput"]

INTERVAL = 0.15  # seconds between two passes of one call's output, at least
MAX_DELTA = 16 * 1024  # characters passed on at once, at most

Send = Callable[[str, int], object]  # (the text, how many characters before it were dropped)


class LiveOutput:
    """Gathers one call's output and sends it on a timer; made and used on the running event loop."""

    def __init__(self, send: Send, *, interval: float = INTERVAL, cap: int = MAX_DELTA) -> None:
        self._send = send
        self._interval = interval
        self._cap = cap
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()  # when text was last sent (at first: when the call began)
        self._text = ""
        self._skipped = 0
        self._timer: asyncio.TimerHandle | None = None
        self._closed = False

    def write(self, text: str) -> None:
        """More output, in order; it is sent at the next tick."""
        if self._closed or not text:
            return
        text = self._text + text
        if len(text) > self._cap:
            cut = len(text) - self._cap
            line = text.find("\n", cut, len(text) - 1)
            if line != -1:
                cut = line + 1  # what is kept starts a line
            self._skipped += cut
            text = text[cut:]
        self._text = text
        if self._timer is None:
            delay = max(0.0, self._last + self._interval - self._loop.time())
            self._timer = self._loop.call_later(delay, self._tick)

    def _tick(self) -> None:
        self._timer = None
        if self._closed or not self._text:
            return
        text, skipped = self._text, self._skipped
        self._text, self._skipped = "", 0
        self._last = self._loop.time()
        self._send(text, skipped)

    def close(self) -> None:
        """The call is over: nothing more is sent (its result carries the output)."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._text = ""
