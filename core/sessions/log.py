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

from chimera.core.errors import ChimeraError
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
        self,
        folder: Path,
        *,
        redactor: Redactor | None = None,
        said: Callable[[str], object] | None = None,
        deferred: Callable[[], object] | None = None,
    ) -> None:
        """Open (or create) the log in ``folder`` now; with ``deferred``, only when the first event to keep
        comes, after calling ``deferred`` (which brings a new session's folder to disk)."""
        self.path = folder / EVENTS
        self.redactor = redactor or Redactor()
        self.failed: str | None = None  # what the first write that failed was told, once said
        self.warning: str | None = None  # what opening it set aside
        self._said = said or _log.warning
        self._fd: int | None = None
        self._deferred = deferred
        if deferred is None:
            self._open()

    def _open(self) -> None:
        fd = open_file(self.path.parent, EVENTS, os.O_RDWR | os.O_CREAT | os.O_APPEND)
        try:
            self.warning = repair_tail(fd, self.path.parent, "events", is_json_object)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def __call__(self, event: StepEvent) -> None:
        if isinstance(event, _SKIP):
            return
        if self._fd is None and self._deferred is not None:
            prepare, self._deferred = self._deferred, None
            try:
                prepare()
                self._open()
            except (OSError, ChimeraError) as err:
                self._failed(str(err.strerror or err) if isinstance(err, OSError) else str(err))
        if self._fd is None:
            return
        line = self.redactor.mask_fields(event).to_json() + "\n"
        try:
            append_line(self._fd, line.encode(), sync=isinstance(event, _SYNC))
        except OSError as err:
            self._failed(str(err.strerror or err))

    def _failed(self, why: str) -> None:
        if self.failed is not None:
            return  # said once already
        self.failed = (
            f"chimera: could not write {self.path} ({why}): the events of this run may be "
            "missing from the session's log (its messages are saved apart); free some space there"
        )
        self._said(self.failed)

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.fsync(self._fd)
            except OSError as err:
                self._failed(str(err.strerror or err))
            finally:
                os.close(self._fd)
                self._fd = None
