"""Provides the run's guards: stuck detection and the token and cost budgets.

A run is stuck when it makes the same call (same tool, arguments equal once
whitespace is collapsed) and gets the same output, again and again; a repeat
whose output changes is polling, and fine. The streak first earns the model a
reminder, always in a turn of its own; only a repeat after that reminder stops
the run, even when one message holds the whole streak.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any, Literal

from chimera.core.tools.executor import ToolOutcome

__all__ = ["STUCK_REMINDER", "StuckDetector", "over_budget"]

STUCK_REMINDER = (
    "You made the same call {repeats} times and got the same result. "
    "Stop repeating it: try another approach, or explain what blocks you."
)


def _normalized(args: dict[str, Any]) -> Any:
    """Arguments with whitespace runs collapsed, so trivially different repeats compare equal."""
    return {k: " ".join(v.split()) if isinstance(v, str) else v for k, v in sorted(args.items())}


class StuckDetector:
    """Counts identical calls with identical results in a row, across turns, and says when to act.

    Args:
        after: identical calls in a row that earn a reminder; a repeat after it stops the run.
    """

    def __init__(self, after: int = 3) -> None:
        self.after = after
        self._last = ""
        self._count = 0
        self._reminded = False  # the current streak has had its reminder

    @property
    def repeats(self) -> int:
        """How many identical calls with identical results end the streak now."""
        return self._count

    def observe(self, outcomes: Iterable[ToolOutcome]) -> Literal["remind", "stop"] | None:
        """Take one message's results in call order: ``remind`` the model, ``stop`` the run, or None.

        ``stop`` only when the streak had its reminder in an earlier message and went on
        in this one: a message that repeats a call many times earns the reminder first.
        """
        reminded_before = self._reminded
        for outcome in outcomes:
            key = json.dumps([outcome.call.name, _normalized(outcome.call.args), outcome.result.output])
            if key == self._last:
                self._count += 1
            else:
                self._last, self._count = key, 1
                self._reminded = reminded_before = False  # a new streak
        if self._count > self.after and reminded_before:
            return "stop"
        if self._count >= self.after and not self._reminded:
            self._reminded = True
            return "remind"
        return None


def over_budget(token_budget: int | None, cost_budget: float | None, *, tokens: int, cost: float) -> str | None:
    """Why the run is over its token or cost budget, or None while it is within them."""
    if token_budget is not None and tokens > token_budget:
        return f"used {tokens:,} tokens, over the budget of {token_budget:,}: raise --max-tokens to let it go on"
    if cost_budget is not None and cost > cost_budget:
        return f"spent ${cost:.4f}, over the budget of ${cost_budget:g}: raise --max-cost to let it go on"
    return None
