"""Provides ``let_go_of_gone_streams``: after the terminal hangs up (SIGHUP), standard output and error are
pointed at /dev/null where they can no longer be written, so what is still said, and the flush at exit, go
nowhere quietly instead of ending in a traceback written to a terminal that is gone. ``chimera compare`` and
the workbench call it before they stop on a hangup. ``HangupProofOutput`` does the same from the side of the
workbench's drawing, whichever comes first: the hang-up signal or a frame drawn to the gone terminal."""

from __future__ import annotations

import os
import sys
from typing import TextIO

__all__ = ["HangupProofOutput", "gone", "let_go_of_gone_streams"]


def gone(fd: int) -> bool:
    """Whether ``fd`` can no longer be written: a terminal that hung up refuses even a write of nothing (EIO)."""
    try:
        os.write(fd, b"")
    except OSError:
        return True
    return False


def let_go_of_gone_streams() -> None:
    """Point stdout and stderr at /dev/null where they can no longer be written (their terminal hung up: EIO),
    so what is still said, and the flush at exit, go nowhere quietly; a file or a pipe still gets the rows."""
    fds = set()
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):  # as replaced (the workbench's), and not
        try:
            fds.add(stream.fileno())  # type: ignore[union-attr]
        except (AttributeError, OSError, ValueError):  # none, or not a file descriptor (a test's stream)
            continue
    for fd in sorted(fds - {-1}):  # Textual's capture of print() says -1
        if gone(fd):
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, fd)
            finally:
                os.close(devnull)


class HangupProofOutput:
    """The stream the workbench draws on, which a terminal's hang-up never makes raise: a write or flush the
    gone terminal refuses lets the streams go (see :func:`let_go_of_gone_streams`) and is dropped."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> None:
        try:
            self._stream.write(text)
        except OSError:
            let_go_of_gone_streams()

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError:
            let_go_of_gone_streams()

    def fileno(self) -> int:
        return self._stream.fileno()

    def isatty(self) -> bool:
        return self._stream.isatty()
