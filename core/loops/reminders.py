"""Provides the event-driven reminders: short rules injected right after the moment they matter.

The rules live here once; the system prompt states the same texts, so the
model hears each rule in the same words at the start and when it applies.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from chimera.core.tools.executor import ToolOutcome

__all__ = ["REMINDERS", "Reminder", "ReminderState"]

_GIT = re.compile(r"(^|[;&|(]\s*|\s)git\s")


@dataclass(frozen=True, slots=True)
class Reminder:
    """A rule with the tool activity that calls for it."""

    key: str
    text: str

    def triggered_by(self, outcome: ToolOutcome) -> bool:
        name, args = outcome.call.name, outcome.call.args
        if self.key == "test":
            return name in {"write", "edit"} and not outcome.result.is_error
        if self.key == "git":
            return name == "bash" and bool(_GIT.search(" " + str(args.get("command", ""))))
        return False


REMINDERS = (
    Reminder("test", "You changed files: run the project's tests (or the closest check) before you say it works."),
    Reminder("git", "Never commit, push or rewrite git history unless the person asked for it."),
)


@dataclass(slots=True)
class ReminderState:
    """Which reminders are due after a batch of tool calls.

    The test reminder comes once after a change and again only after the model
    has run a command since (it may have tested); the git reminder comes once a run.
    """

    given: set[str] = field(default_factory=set)

    def due(self, outcomes: Iterable[ToolOutcome]) -> list[Reminder]:
        batch = list(outcomes)
        if any(o.call.name == "bash" for o in batch):
            self.given.discard("test")
        out = []
        for reminder in REMINDERS:
            if reminder.key not in self.given and any(reminder.triggered_by(o) for o in batch):
                self.given.add(reminder.key)
                out.append(reminder)
        return out
