"""Provides ``LoopConfig``: the limits and knobs of an agent run."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from chimera.core.option_names import LOOPS
from chimera.core.tools.base import DEFAULT_MAX_OUTPUT

if TYPE_CHECKING:
    from chimera.core.bus import EventBus
    from chimera.core.loops.compaction import Compaction
    from chimera.core.loops.guards import StuckDetector
    from chimera.core.permissions.policy import PermissionPolicy

__all__ = ["LOOPS", "LoopConfig", "RetryPolicy"]


def _env_int(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 10 else default


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often, and how patiently, failed model requests are tried again.

    Args:
        max_retries: retries after the first attempt, for transient failures.
        unreachable_retries: retries when the server has never been reached (nothing listens at
            the URL, or its name does not resolve): none by default, since that is a setup
            error to report at once. A server that answered before and then drops counts as a
            lost connection, retried up to ``max_retries``.
        base_delay: the first backoff wait in seconds; it doubles each attempt.
        max_delay: the longest backoff wait; a server's ``retry-after`` may ask for more,
            up to ``max_retry_after``.
        max_retry_after: the longest ``retry-after`` honoured; past it the run fails.
        max_continuations: how many times a response cut off by ``max_tokens`` is continued.
    """

    max_retries: int = 6
    unreachable_retries: int = 0
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_retry_after: float = 300.0
    max_continuations: int = 3

    def wait(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (1-based)."""
        if retry_after is not None:
            return retry_after
        return min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))


@dataclass(frozen=True, slots=True)
class LoopConfig:
    """Limits of one run.

    Args:
        max_steps: model turns before the run stops with reason ``max_turns``.
        max_tokens: the output token limit of each model response.
        max_output: characters of noisy tool output the model sees (``CHIMERA_MAX_TOOL_OUTPUT``).
        concurrency: read-only tool calls run at once.
        retry: the retry policy for model requests.
        token_budget: input plus output tokens of the whole run; past it the run stops (``budget``).
        cost_budget: dollars for the whole run; past it the run stops (``budget``).
        time_limit: seconds of wall time for the run; past it the run stops (``time_limit``).
        stuck_after: identical calls in a row (same tool, arguments and output) that earn a
            reminder; one more and the run stops as ``stuck``.

    The seeds' hooks, each None by default:

        permissions: the permission policy (every call allowed when None).
        detector: the stuck detector (one that acts after ``stuck_after`` repeats when None).
        handler: called with every event as it happens: text deltas stream the tokens to a UI.
        event_bus: where every event is published.
        compaction: how the conversation is compacted (``Compaction()`` when None).

        auto_compact_threshold: the share of the model's context window (from the input tokens
            the API reports) past which the older part of the conversation is summarized before
            the next request; None leaves it to a "prompt is too long" answer and to the person.
    """

    max_steps: int = 50
    max_tokens: int = 16_000
    token_budget: int | None = None
    cost_budget: float | None = None
    time_limit: float | None = None
    stuck_after: int = 3
    max_output: int = field(default_factory=lambda: _env_int("CHIMERA_MAX_TOOL_OUTPUT", DEFAULT_MAX_OUTPUT))
    concurrency: int = 10
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    permissions: PermissionPolicy | None = None
    detector: StuckDetector | None = None
    handler: Callable[[Any], object] | None = None
    event_bus: EventBus | None = None
    compaction: Compaction | None = None
    auto_compact_threshold: float | None = 0.8

    def __post_init__(self) -> None:
        threshold = self.auto_compact_threshold
        if threshold is not None and not 0 < threshold <= 1:
            raise ValueError(f"auto_compact_threshold is a share of the window, above 0 and at most 1, not {threshold}")
