"""Provides the summary of a branch the person left: asked of the model, carried into the path they came to.

When the person switches away from a branch (back to an earlier point, or over to
another branch), what was tried there is out of the model's sight: the
conversation and the files are as they were at the point they came to. Asked
for, the branch left behind is summarized (what was tried, what was learned,
what worked and what did not) and the summary joins the new path as a loop
note (:func:`~chimera.core.messages.carried_block`), so the next run knows
what not to try again. The transcript sent is compaction's
(:func:`~chimera.core.loops.compaction.transcript`), cut to fit the model's
window the same way.
"""

from __future__ import annotations

from collections.abc import Sequence

from chimera.core.errors import ProviderError
from chimera.core.loops.compaction import Compaction, request_budget, transcript
from chimera.core.loops.model_turn import ModelTurn
from chimera.core.messages import carried_block, joined_text
from chimera.core.providers.base import Message, ModelRequest

__all__ = ["BRANCH_SYSTEM", "carried_message", "summarize_branch"]

BRANCH_SYSTEM = (
    "You summarize a branch of a coding session that the person has left. The work goes on from an earlier "
    "point without it: the agent there will see only your summary of what the branch did."
)
_ASK = """The conversation above is the branch the person left. Summarize it for the agent that goes on from the \
earlier point. Cover:
1. what was tried, and what the person asked for on this branch;
2. what was learned: facts about the code, commands run and what they showed, exact error messages;
3. what worked and what did not, and why;
4. the changes it made to files (with their paths): they are not in the files any more.
Be concrete and short. Answer with the summary only; call no tools."""


async def summarize_branch(model: ModelTurn, left: Sequence[Message], policy: Compaction) -> str:
    """The model's summary of the messages ``left`` (a branch, oldest first); its usage is counted and reported.

    ProviderError when the model answers with no words."""
    output, limit = request_budget(model.window, policy)
    prompt = f"<branch>\n{transcript(left, limit, policy.max_block)}\n</branch>\n\n{_ASK}"
    request = ModelRequest(system=BRANCH_SYSTEM, messages=[{"role": "user", "content": prompt}], max_tokens=output)
    done = await model.ask(request, quiet=True)
    model.report(done)
    summary = joined_text(done.message).strip()
    if not summary:
        raise ProviderError(
            "the model gave an empty summary of the branch left behind", kind="branch_summary", retryable=False
        )
    return summary


def carried_message(summary: str) -> Message:
    """The user message that carries ``summary`` into the path the person came to."""
    return {"role": "user", "content": [carried_block(summary)]}
