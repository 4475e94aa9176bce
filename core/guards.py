"""Provides the run's guards: stuck detection and the token and cost budgets.

A run is stuck when it makes the same call (same tool, arguments equal once
whitespace is collapsed) and gets the same output, again and again; a repeat
whose output changes is polling, and fine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from chimera.core.executor import ToolOutcome
from chimera.core.loop_config import LoopConfig

__all__ = ["STUCK_REMINDER", "StuckDetector", "over_budget"]

STUCK_REMINDER = (
    "You made the same call {repeats} times and got the same result. "
    "Stop repeating it: try another approach, or explain what blocks you."
)


def _normalized(args: dict[str, Any]) -> Any:
    """Arguments with whitespace runs collapsed, so trivially different repeats compare equal."""
    return {k: " ".join(v.split()) if isinstance(v, str) else v for k, v in sorted(args.items())}


class StuckDetector:
    """Counts identical calls with identical results in a row, across turns."""

    def __init__(self) -> None:
        self._last = ""
        self._count = 0

    def observe(self, outcomes: Iterable[ToolOutcome]) -> int:
        """Take a batch of results in call order; return how many identical ones end the streak now."""
        for outcome in outcomes:
            key = json.dumps([outcome.call.name, _normalized(outcome.call.args), outcome.result.output])
            self._count = self._count + 1 if key == self._last else 1
            self._last = key
        return self._count


def over_budget(config: LoopConfig, *, tokens: int, cost: float) -> str | None:
    """Why the run is over its token or cost budget, or None while it is within them."""
    if config.token_budget is not None and tokens > config.token_budget:
        return f"used {tokens:,} tokens, over the budget of {config.token_budget:,}: raise --max-tokens to let it go on"
    if config.cost_budget is not None and cost > config.cost_budget:
        return f"spent ${cost:.4f}, over the budget of ${config.cost_budget:g}: raise --max-cost to let it go on"
    return None
