"""Provides ``SessionLog``: a bus subscriber that keeps a session's events as JSON lines.

``events.jsonl`` in the session's folder, private to its owner: the trajectory
of every run (the tree of messages lives beside it, in ``entries.jsonl``).
Streaming deltas are left out (the completed message carries the whole text);
every other event is one complete line, flushed as it is written and fsynced
at turn boundaries. Events carry no secrets: API keys never reach them.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO

from chimera.core.events import RunFinished, StepEvent, TextDelta, ThinkingDelta, TurnStarted

__all__ = ["SessionLog"]

_SKIP = (TextDelta, ThinkingDelta)
_SYNC = (TurnStarted, RunFinished)


class SessionLog:
    """Appends events to ``<session folder>/events.jsonl``."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "events.jsonl"
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._file: IO[str] = open(fd, "a", encoding="utf-8")  # noqa: SIM115

    def __call__(self, event: StepEvent) -> None:
        if isinstance(event, _SKIP) or self._file.closed:
            return
        self._file.write(event.to_json() + "\n")
        self._file.flush()
        if isinstance(event, _SYNC):
            os.fsync(self._file.fileno())

    def close(self) -> None:
        if not self._file.closed:
            self._file.flush()
            os.fsync(self._file.fileno())
            self._file.close()
