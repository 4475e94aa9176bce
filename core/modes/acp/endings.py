"""Provides ``stop_reason``: how a run's end answers ``session/prompt``; and the JSON-RPC error codes of refusals.

A run that completed ends the turn (``end_turn``); one stopped by ``session/cancel`` is ``cancelled``; one
that reached a limit Chimera sets on a turn (its model turns, a plan step's turns, the token, cost or time
budget, or the same call over and over) is ``max_turn_requests``, and one whose answer the output limit
cut is ``max_tokens``; the model declining is a ``refusal``. Each of these but a completed run also says
why, in a line the person reads. A cancelled plan ends the turn as the person chose. Anything else is a
failure of the run (the server refused the key, could not be reached, a plan step failed its check): the
prompt is answered with a JSON-RPC error whose message is that one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp import RequestError
from acp.schema import StopReason

from chimera.core.wording import describe_ending

if TYPE_CHECKING:  # (the session's machinery loads after initialize is answered)
    from chimera.core.agent import AgentResult

__all__ = ["BAD_INPUT", "NO_SESSION", "RUN_FAILED", "stop_reason"]

RUN_FAILED = -32603  # JSON-RPC's internal error: the turn could not be done
BAD_INPUT = -32602  # JSON-RPC's invalid params: what was asked cannot be done as asked
NO_SESSION = -32002  # ACP's resource not found: no such session
_LIMITS = frozenset({"max_turns", "step_turns", "budget", "time_limit", "stuck"})


def stop_reason(result: AgentResult, *, cancelled: bool) -> tuple[StopReason, str]:
    """The stop reason of a run that ended with ``result`` (``cancelled``: the client asked it to stop), and the
    line that says why it stopped ("" when there is nothing to say). RequestError for a run that failed."""
    ending = describe_ending(result.success, result.reason, result.error)
    why = _capital(result.error or ending.why)  # what stopped it, as the run said it
    if result.success:
        return "end_turn", ""
    if result.reason == "interrupted" or cancelled:
        return "cancelled", ""
    if result.reason in _LIMITS:
        return "max_turn_requests", why
    if result.reason == "max_tokens":
        return "max_tokens", why
    if result.reason == "refusal":
        return "refusal", ""
    if result.reason == "plan_cancelled":
        return "end_turn", _capital(ending.line)
    raise RequestError(RUN_FAILED, why)


def _capital(line: str) -> str:
    """``line`` as a sentence: its first letter capital, a full stop at its end."""
    line = line.strip()
    return f"{line[:1].upper()}{line[1:]}{'' if not line or line.endswith('.') else '.'}"
