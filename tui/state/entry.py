"""Provides ``Entry``: one thing the conversation shows (a message, a call, a plan, a notice...), and its kinds.

Plain data, no Textual: ``state.transcript`` builds entries from step events,
the timeline (``widgets.transcript_view``) draws them. An entry's ``version``
grows with every change, so a view can keep what it rendered and redo only
what changed; its ``serial`` is never the same for two entries.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FOLDS", "KINDS", "Entry"]

_SERIALS = itertools.count()

KINDS = (
    "user",
    "steering",
    "text",
    "thinking",
    "tool",
    "plan",
    "compaction",
    "switch",
    "notice",
    "reflection",  # Reflexion asked the model to look back at its work
    "candidate",  # TreeOfThought: one answer sampled, and whether it was the one taken
    "reminder",  # a reminder given to the model with the tools' results
    "checkpoint",  # the workspace's files pinned at this point
)
FOLDS = frozenset({"thinking", "tool", "compaction", "reflection", "candidate", "reminder", "checkpoint"})


@dataclass(slots=True, eq=False)
class Entry:
    """One thing on screen. ``kind`` is one of :data:`KINDS`.

    ``text`` holds the words (a message, thinking, a notice, a compaction's summary);
    a tool call also has ``name``, ``args``, ``output``, ``status`` (``asking``: waiting for the person's
    answer, ``running``, ``done``, ``failed``, ``cancelled``) and ``duration_ms``; while it runs, ``output`` is
    the end of what it has printed so far, ``started`` the transcript's clock when it started (or was let run) and
    ``elapsed`` the whole seconds since, as of the last tick; over, ``ended`` says how (the call's status:
    ``ok``, ``failed``, ``refused``, ``declined``, ``cancelled``, ``skipped``). A plan has ``steps`` and each step's
    ``checks`` (True passed, False failed, None not yet). ``severity`` styles a notice
    (``info``, ``success``, ``warning``, ``error``). ``version`` grows with every change.
    """

    kind: str
    text: str = ""
    folded: bool = False
    streaming: bool = False
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    output: str = ""
    status: str = ""
    ended: str = ""  # how a finished call ended (ok, failed, refused, declined, cancelled, skipped)
    duration_ms: float | None = None
    started: float | None = None
    elapsed: int = 0
    data: dict[str, Any] = field(default_factory=dict)
    steps: list[str] = field(default_factory=list)
    checks: list[bool | None] = field(default_factory=list)
    severity: str = "info"
    version: int = 0
    serial: int = field(default_factory=lambda: next(_SERIALS))  # never the same for two entries

    def touch(self) -> None:
        self.version += 1

    @property
    def failed(self) -> bool:
        return self.kind == "tool" and self.status == "failed"
