"""Provides ``TreeOfThought``: each turn, several answers side by side, and the best one taken.

Every turn asks for ``n_candidates`` answers to the same context at once (each
from a fork of it). They differ by the model's own sampling: no temperature is
sent, since the Messages API of 2026-10-21 refuses sampling parameters (even
1.0) and the SDK no longer takes them. The first candidate that
calls a tool is taken; when none does, one evaluation request scores them all
and the best is taken. Each candidate, the scores and the choice are events;
the candidates not taken stay in the session tree as siblings of the one taken,
so the tree shows what else the model proposed.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass

from chimera.core.events import CandidateChosen, CandidateProposed, TextDelta, ThinkingDelta
from chimera.core.loops.base import Core, Outcome
from chimera.core.loops.strategy import Strategy
from chimera.core.messages import Prompt, joined_text
from chimera.core.providers.base import ModelDone

__all__ = ["EVALUATION_PROMPT", "TreeOfThought"]

EVALUATION_PROMPT = (
    "Here are {count} candidate next responses to the conversation above. Rate how well each one moves "
    "the task forward, from 1 (poor) to 10 (excellent). Answer with one line per candidate, written as "
    "`N: score`, and nothing else. Do not call a tool.\n\n{listing}"
)
_SCORE = re.compile(r"^\W*(\d+)\W*[:=\-]\s*(\d+)", re.MULTILINE)


@dataclass(slots=True)
class TreeOfThought(Strategy):
    """Steps as ReAct does, each turn's answer chosen among ``n_candidates``.

    Args:
        config: the limits and hooks of a run.
        max_steps: the turn limit, when given (else ``config.max_steps``).
        n_candidates: answers sampled each turn (at least 1).
    """

    n_candidates: int = 3
    name: str = "tot"

    def __post_init__(self) -> None:
        if self.n_candidates < 1:
            raise ValueError(f"n_candidates must be at least 1, not {self.n_candidates}")
        Strategy.__post_init__(self)

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        await core.user_turn(task)
        while True:
            result = await core.step(lambda: self._choose(core))
            if result.outcome is not None:
                return result.outcome

    async def _choose(self, core: Core) -> ModelDone:
        context = core.context
        candidates = await asyncio.gather(*(core.request(context.fork(), quiet=True) for _ in range(self.n_candidates)))
        for index, candidate in enumerate(candidates):
            core.emit(CandidateProposed(index=index, message=candidate.message, stop_reason=candidate.stop_reason))
        index, scores, reason = await self._pick(core, candidates)
        core.emit(CandidateChosen(index=index, scores=scores, reason=reason))
        chosen = candidates[index]
        for block in chosen.message.get("content", []):  # front ends see the answer taken as if it streamed
            if block.get("type") == "thinking" and block.get("thinking"):
                core.emit(ThinkingDelta(text=block["thinking"]))
            elif block.get("type") == "text" and block.get("text"):
                core.emit(TextDelta(text=block["text"]))
        core.adopt(chosen, aside=[c for i, c in enumerate(candidates) if i != index])
        return chosen

    async def _pick(self, core: Core, candidates: list[ModelDone]) -> tuple[int, list[int | None], str]:
        unscored: list[int | None] = [None] * len(candidates)
        usable = [i for i, c in enumerate(candidates) if c.stop_reason != "refusal"] or [0]
        for index in usable:
            if any(b.get("type") == "tool_use" for b in candidates[index].message.get("content", [])):
                return index, unscored, "the first candidate that calls a tool"
        if len(usable) == 1:
            return usable[0], unscored, "the only candidate with an answer"
        listing = "\n\n".join(
            f"Candidate {i + 1}:\n{joined_text(c.message).strip() or '(no text)'}" for i, c in enumerate(candidates)
        )
        judge = core.context.fork()
        judge.add({"role": "user", "content": EVALUATION_PROMPT.format(count=len(candidates), listing=listing)})
        verdict = await core.request(judge, quiet=True)
        scores = _scores(joined_text(verdict.message), len(candidates))
        rated = [i for i in usable if scores[i] is not None]
        if not rated:
            return usable[0], scores, "the evaluation gave no scores: the first candidate"
        best = max(rated, key=lambda i: (scores[i], -i))
        return best, scores, f"the evaluation scored it highest ({scores[best]} of 10)"


def _scores(text: str, count: int) -> list[int | None]:
    """``N: score`` lines of the evaluation, as a score for each candidate (None where it gave none)."""
    scores: list[int | None] = [None] * count
    for number, score in _SCORE.findall(text):
        position, value = int(number) - 1, int(score)
        if 0 <= position < count and 1 <= value <= 10 and scores[position] is None:
            scores[position] = value
    return scores
