"""Provides ``SessionLog``: a bus subscriber that keeps a session's events as JSON lines.

``events.jsonl`` in the session's folder, private to its owner: the trajectory
of every run (the tree of messages lives beside it, in ``entries.jsonl``).
Streaming deltas are left out (the completed message carries the whole text);
every other event is one complete line written in one call, fsynced at turn
boundaries; a line a killed process cut short is set aside when the log is
next opened, so the next event never glues onto it. Events carry no secrets:
the loop masks them as it emits them, and this log masks every line again
with its own ``redactor``, whoever published the event.
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera.core.events import RunFinished, StepEvent, TextDelta, ThinkingDelta, TurnStarted
from chimera.core.jsonl import append_line, set_aside_torn_tail
from chimera.core.redact import Redactor

__all__ = ["SessionLog"]

_SKIP = (TextDelta, ThinkingDelta)
_SYNC = (TurnStarted, RunFinished)


class SessionLog:
    """Appends events to ``<session folder>/events.jsonl``."""

    def __init__(self, folder: Path, *, redactor: Redactor | None = None) -> None:
        self.path = folder / "events.jsonl"
        self.redactor = redactor or Redactor()
        self._fd: int | None = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self.warning = set_aside_torn_tail(self.path)

    def __call__(self, event: StepEvent) -> None:
        if isinstance(event, _SKIP) or self._fd is None:
            return
        line = self.redactor.mask_fields(event).to_json() + "\n"
        append_line(self._fd, line.encode(), sync=isinstance(event, _SYNC))

    def close(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
