"""Provides ``PasteParser``, which reads a bracketed paste whole, and ``PasteKeepingDriver``, the terminal
driver that reads keys with it.

A terminal sends a paste between ``ESC [200~`` and ``ESC [201~``. Textual's own parser (8.2.8) reads the
paste's characters one at a time like keys, and an ESC inside it (coloured test output, copied from a
terminal) starts what it takes for a key sequence: the rest of the paste then arrives as key presses, and
its first newline is ``enter``, which sends a task the person never finished. ``PasteParser`` takes
everything between the two markers as one ``Paste`` event, whatever it holds, before Textual's parser sees
any of it; the rest of the input (keys, the mouse, the terminal's reports) goes to Textual's parser as
before. A marker cut in two by the end of one read waits for the next read (a lone ESC at the end of a
read goes on after the escape delay, as the escape key).
"""

from __future__ import annotations

import os
import selectors
import time
from codecs import getincrementaldecoder
from collections.abc import Iterable, Iterator
from typing import Any

from textual import constants, events
from textual._xterm_parser import XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from chimera.tui.hangup import HangupProofOutput, gone

__all__ = ["PASTE_END", "PASTE_START", "PasteKeepingDriver", "PasteParser"]

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
_READ = 4096
PASTE_PIECE = 8 * 1024 * 1024  # a paste this long is given on in pieces: an unclosed one never fills the memory


def _cut_marker(data: str, marker: str) -> int:
    """How many characters at the end of ``data`` are the start of ``marker`` (0 when none)."""
    for size in range(min(len(marker) - 1, len(data)), 0, -1):
        if data.endswith(marker[:size]):
            return size
    return 0


class PasteParser(XTermParser):
    """Textual's parser, with a bracketed paste taken whole (ESC and all) as one ``Paste`` event."""

    def __init__(self, debug: bool = False) -> None:
        super().__init__(debug)
        self._paste: list[str] | None = None  # the paste read so far, while one is open
        self._held = ""  # the start of a marker, cut by the end of a read
        self._held_since = 0.0

    def feed(self, data: str) -> Iterable[Message]:
        if not data:  # the end of the input
            return super().feed(data)
        return list(self._read(self._held + data))

    def _read(self, data: str) -> Iterator[Message]:
        self._held = ""
        while data:
            if self._paste is not None:
                end = data.find(PASTE_END)
                if end < 0:  # the paste goes on in the next read
                    cut = _cut_marker(data, PASTE_END)
                    self._paste.append(data[: len(data) - cut])
                    self._hold(data[len(data) - cut :])
                    if sum(map(len, self._paste)) >= PASTE_PIECE:
                        yield events.Paste("".join(self._paste).replace("\x00", ""))
                        self._paste = []
                    return
                pasted = "".join([*self._paste, data[:end]])
                self._paste = None
                yield events.Paste(pasted.replace("\x00", ""))
                data = data[end + len(PASTE_END) :]
            else:
                start = data.find(PASTE_START)
                if start < 0:
                    cut = _cut_marker(data, PASTE_START)
                    if len(data) > cut:  # (an empty feed would tell Textual's parser the input has ended)
                        yield from super().feed(data[: len(data) - cut])
                    self._hold(data[len(data) - cut :])
                    return
                if start:
                    yield from super().feed(data[:start])
                self._paste = []
                data = data[start + len(PASTE_START) :]

    def _hold(self, part: str) -> None:
        self._held = part
        self._held_since = time.monotonic()

    def tick(self) -> Iterable[Message]:
        """A marker's start held past the escape delay outside a paste was not a marker: keys after all."""
        held: list[Message] = []
        if self._held and self._paste is None and time.monotonic() - self._held_since >= constants.ESCAPE_DELAY:
            part, self._held = self._held, ""
            held = list(super().feed(part))
        return [*held, *super().tick()]


class PasteKeepingDriver(LinuxDriver):
    """Textual's driver for a POSIX terminal, reading its input with :class:`PasteParser`, and outliving a
    terminal that hangs up until the app's SIGHUP handler ends it: its output goes nowhere instead of ending
    Textual's writer thread (after which every frame would wait forever on that thread's full queue), and its
    input stops being read instead of being read empty in a busy loop."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self._file is not None:  # typed as the real stream; the writer thread only writes, flushes, asks fileno
            self._file = HangupProofOutput(self._file)  # type: ignore[assignment]

    def resume_application_mode(self) -> None:
        """Back from a suspend (SIGCONT), unless the terminal hung up: the kernel sends SIGCONT with SIGHUP, and a
        resume then would start a second writer on the gone terminal, whose death stops every later frame."""
        if not gone(self.fileno):
            super().resume_application_mode()

    def run_input_thread(self) -> None:
        """Read the terminal until the app stops, turning what comes into Textual's events."""
        parser = PasteParser(self._debug)
        decode = getincrementaldecoder("utf-8")(errors="replace").decode
        with selectors.SelectSelector() as selector:
            selector.register(self.fileno, selectors.EVENT_READ)
            while not self.exit_event.is_set():
                for _ in selector.select(0.1):
                    try:
                        raw = os.read(self.fileno, _READ)
                    except OSError:  # EIO: the terminal hung up
                        raw = b""
                    if not raw:  # nothing more will ever come; the app stops on the SIGHUP that came with it
                        self.exit_event.wait()
                        return
                    for event in parser.feed(decode(raw)):
                        self.process_message(event)
                for event in parser.tick():
                    self.process_message(event)
