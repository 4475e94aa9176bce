"""Provides the words front ends show for counts, tool call timings and how runs end, so every front end says
them alike."""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeGuard

__all__ = [
    "Ending",
    "command",
    "describe_compaction",
    "describe_ending",
    "describe_left_out",
    "describe_output",
    "describe_timing",
    "plural",
    "point_name",
    "tokens",
]


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, plural unless the count is one: ``1 turn``, ``2 turns``.

    ``many`` is the plural when it is not ``word`` + s (``entry``, ``entries``).
    """
    return f"{count} {word}" if count == 1 else f"{count} {many or word + 's'}"


def command(verb: str, *operands: str, flags: tuple[str, ...] = ()) -> str:
    """A ``chimera`` command for a person to run, in backticks, each word quoted for the shell as needed: a
    checkpoint named ``my point; rm -rf ~`` is one word of it, never a second command, and one named ``-x``
    comes after ``--``, never read as an option."""
    if any(operand.startswith("-") for operand in operands):
        words = ["chimera", verb, *flags, "--", *operands]
    else:
        words = ["chimera", verb, *operands, *flags]
    return "`" + " ".join(shlex.quote(word) for word in words) + "`"


def describe_timing(status: str, duration_ms: float) -> str:
    """How a finished call's time reads, from how it ended (its ``status``) and its duration.

    ``0.42s`` for a call that ran to its end; ``cancelled after 1.20s`` for one stopped
    while it ran, ``cancelled before it ran`` for one stopped before it began,
    ``not run`` for one the run stopped before (a spent budget), and ``refused, not run``
    or ``declined, not run`` for one a rule, the mode or nobody to ask refused, or the person
    declined. Only a call that ran reads as a time (it starts with a digit).
    """
    if status == "cancelled":
        return f"cancelled after {duration_ms / 1000:.2f}s" if duration_ms > 0 else "cancelled before it ran"
    if status == "skipped":
        return "not run"
    if status in _NEVER_RAN:
        return f"{status}, not run"
    return f"{duration_ms / 1000:.2f}s"


def describe_output(name: str, output: str, data: Mapping[str, Any]) -> str:
    """How much a finished call said, as its line shows it: ``3 lines``; ``1,204 lines, cut`` when the model saw
    it cut (the whole output's lines when known: its ``data``'s ``lines``); for a ``read``, the file's lines it
    read (``data``'s ``first`` to ``last``), whatever note follows them."""
    count = output.count("\n") + (not output.endswith("\n"))
    first, last = data.get("first"), data.get("last")
    if name == "read" and _whole(first) and _whole(last):
        count = max(0, last - first + 1)
    cut = bool(data.get("cut")) or "full_output" in data  # older results named only the file
    lines = data.get("lines")
    if cut and _whole(lines):
        count = lines
    said = f"{count:,} {'line' if count == 1 else 'lines'}"
    return f"{said}, cut" if cut else said


def _whole(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


_NEVER_RAN = frozenset({"refused", "declined"})  # statuses of calls the permissions kept from running


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


@dataclass(frozen=True, slots=True)
class Ending:
    """How a run ended, in words, never as an internal code: ``state`` is ``finished``, ``interrupted``,
    ``cancelled`` or ``failed``; ``why`` a short phrase (empty when the state says it all); ``line`` a
    sentence with the run's own error when it has one."""

    state: str
    why: str
    line: str

    @property
    def brief(self) -> str:
        """The state and why, in a few words: ``failed: it reached the turn limit``."""
        return f"{self.state}: {self.why}" if self.why else self.state


# Why a run stopped, as a person says it: the reasons that end a run (RunFinished.reason) and the kinds of
# provider errors that can. A reason not here is said with its underscores as spaces.
_STOPPED_BECAUSE = {
    "max_turns": "it reached the turn limit",
    "step_turns": "a step of the plan reached its turn limit",
    "stuck": "it kept repeating the same call",
    "budget": "its budget is spent",
    "time_limit": "it reached the time limit",
    "max_tokens": "the answer kept hitting the output limit",
    "refusal": "the model declined",
    "diverged": "the replay diverged from the recording",
    "no_plan": "the model gave no plan",
    "plan_step_failed": "a step of the plan failed its check",
    "session": "the session could not be kept",
    "error": "something went wrong",
    "auth": "the API key was refused",
    "permission": "the API refused the request",
    "not_found": "the model or endpoint was not found",
    "bad_request": "the API refused the request",
    "rate_limit": "the API's rate limit",
    "overloaded": "the API is overloaded",
    "server": "the API's server failed",
    "connection": "the connection to the API failed",
    "unreachable": "the API could not be reached",
    "stalled": "the API's stream stalled",
    "incomplete": "the API's stream ended early",
    "stream_error": "the API's stream failed",
    "protocol": "the server does not speak the Messages API",
    "prompt_too_long": "the conversation no longer fits the model",
    "replay_exhausted": "the replay ran past its recording",
}


def describe_ending(success: bool, reason: str, error: str = "") -> Ending:
    """How a run that ended with ``success``, ``reason`` and ``error`` (RunFinished's) reads.

    A cancelled plan is *cancelled* and a replay that reached the end of its recording is
    *finished*: neither failed.
    """
    if success:
        return Ending("finished", "", "finished")
    if reason == "interrupted":
        return Ending("interrupted", "", "interrupted")
    if reason == "plan_cancelled":
        return Ending(
            "cancelled",
            "the plan was cancelled",
            f"the plan was cancelled: {error}" if error else "the plan was cancelled",
        )
    if reason == "recording_ended":
        return Ending("finished", "where the recording stops", error or "the recording ends here")
    why = _STOPPED_BECAUSE.get(reason, reason.replace("_", " "))
    return Ending("failed", why, f"stopped: {error}" if error else f"stopped: {why}")


_LEFT_OUT_BECAUSE = {
    "refused": "the server refused it",
    "declined": "the model declined it",
    "interrupted": "it was interrupted before any answer",
}


def describe_left_out(why: str) -> str:
    """One line saying that a run's words no answer followed are left out of the conversation, and why
    (``why``: ``refused``, ``declined`` or ``interrupted``, as ``run_finished`` says)."""
    because = _LEFT_OUT_BECAUSE.get(why, why)
    return f"left out of the conversation ({because}): the next request is sent without it"


def point_name(node: str | None) -> str:
    """How a point of a session's tree is named to a person: its id, or "the point before the first message"."""
    return "the point before the first message" if node is None else node


def shown_path(path: Path) -> str:
    """A folder as a person reads it: under their home, from ``~``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)
