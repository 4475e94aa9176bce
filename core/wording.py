"""Provides the words front ends show for counts and tool call timings, so every front end says them alike."""

from __future__ import annotations

__all__ = ["describe_compaction", "describe_timing", "plural", "tokens"]

_NOT_RUN = "Error: not run:"  # what Executor.skipped answers a call the run stopped before


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, plural unless the count is one: ``1 turn``, ``2 turns``.

    ``many`` is the plural when it is not ``word`` + s (``entry``, ``entries``).
    """
    return f"{count} {word}" if count == 1 else f"{count} {many or word + 's'}"


def describe_timing(output: str, duration_ms: float) -> str:
    """How a finished call's time reads, from its result and duration.

    ``0.42s`` for a call that ran to its end; ``cancelled after 1.20s`` for one stopped
    while it ran, ``cancelled before it ran`` for one stopped before it began, and
    ``not run`` for one the run stopped before (a spent budget).
    """
    from chimera.core.tools.executor import (
        UNFINISHED_PREFIX,  # here: the session commands need plural() alone, and fast
    )

    if output.startswith(UNFINISHED_PREFIX):
        return f"cancelled after {duration_ms / 1000:.2f}s" if duration_ms > 0 else "cancelled before it ran"
    if output.startswith(_NOT_RUN):
        return "not run"
    return f"{duration_ms / 1000:.2f}s"


_COMPACTED_BECAUSE = {
    "threshold": "the context was filling up",
    "prompt_too_long": "the model said the prompt was too long",
}


def describe_compaction(reason: str, tokens_before: int, tokens_after: int) -> str:
    """One line saying a compaction happened, why, and how much smaller the conversation is."""
    why = _COMPACTED_BECAUSE.get(reason, "by hand")
    return f"compacted the conversation ({why}): about {tokens(tokens_before)} → {tokens(tokens_after)} tokens"


def tokens(count: int) -> str:
    """A token count as a person reads it: ``950``, ``12.3k``."""
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)
