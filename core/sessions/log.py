"""Provides ``SessionLog``: a bus subscriber that keeps a session's events as JSON lines.

``events.jsonl`` in the session's folder, private to its owner: the trajectory
of every run (the tree of messages lives beside it, in ``entries.jsonl``).
Streaming deltas are left out (the completed message carries the whole text, the
call's result its output);
every other event is one complete line written in one call, fsynced at turn
boundaries; a line a killed process cut short is set aside when the log is
next opened (a whole last event that only lacks its newline is kept), so the
next event never glues onto it. The file is opened as every session file is
(:mod:`chimera.core.sessions.files`): never through a link, never a FIFO. Events carry no secrets:
the loop masks them as it emits them, and this log masks every line again
with its own ``redactor``, whoever published the event.

A write that fails (a full disk) writes nothing and costs only that event:
the first failure is said once, in one line (``said``, by default a warning
on the ``chimera.sessions`` logger), and the log keeps trying, so the events
after the disk has room again are kept.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from chimera.core.events import RunFinished, StepEvent, TextDelta, ThinkingDelta, ToolOutputDelta, TurnStarted
from chimera.core.redact import Redactor
from chimera.core.sessions.files import EVENTS, open_file
from chimera.core.sessions.jsonl import append_line, is_json_object, repair_tail

__all__ = ["SessionLog"]

_log = logging.getLogger("chimera.sessions")

_SKIP = (TextDelta, ThinkingDelta, ToolOutputDelta)
_SYNC = (TurnStarted, RunFinished)


class SessionLog:
    """Appends events to ``<session folder>/events.jsonl``."""

    SKIPPED = _SKIP  # the kinds it never writes: subscribe it with ``skip=SessionLog.SKIPPED``

    def __init__(
        self, folder: Path, *, redactor: Redactor | None = None, said: Callable[[str], object] | None = None
    ) -> None:
        self.path = folder / EVENTS
        self.redactor = redactor or Redactor()
        self.failed: str | None = None  # what the first write that failed was told, once said
        self._said = said or _log.warning
        self._fd: int | None = open_file(folder, EVENTS, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            self.warning = repair_tail(self._fd, folder, "events", is_json_object)
        except BaseException:
            os.close(self._fd)
            raise

    def __call__(self, event: StepEvent) -> None:
        if isinstance(event, _SKIP) or self._fd is None:
            return
        line = self.redactor.mask_fields(event).to_json() + "\n"
        try:
            append_line(self._fd, line.encode(), sync=isinstance(event, _SYNC))
        except OSError as err:
            self._failed(err)

    def _failed(self, err: OSError) -> None:
        if self.failed is not None:
            return  # said once already
        self.failed = (
            f"chimera: could not write {self.path} ({err.strerror or err}): the events of this run may be "
            "missing from the session's log (its messages are saved apart); free some space there"
        )
        self._said(self.failed)

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as err:
                self._failed(err)
            finally:
                os.close(self._fd)
                self._fd = None
