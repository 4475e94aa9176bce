"""Provides ``Reflexion``: ReAct that stops to reflect every few tool calls.

Every ``reflect_every`` tool calls the loop adds the reflection prompt to the
conversation (a ``reflection`` event says so) before the next request, so the
model looks back at what worked before it goes on. With a verifier (``verify``,
a command), its result comes first: a deterministic check of the work, which the
model's own reflection then reads, before any judgement of its own.

A reply to the reflection prompt that calls no tool is the model's reflection, a
note to itself, not its final answer: the loop then asks it to go on with the
task (``CONTINUE_PROMPT``). Only an answer without a tool call that is not a
reply to a reflection ends the run, as in ReAct; the turn limit bounds the whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.events import Reflected
from chimera.core.loops.base import Core, Outcome
from chimera.core.loops.strategy import Strategy
from chimera.core.messages import Prompt

__all__ = ["CONTINUE_PROMPT", "REFLECTION_PROMPT", "Reflexion"]

REFLECTION_PROMPT = (
    "Reflect on what you just did. What worked? What didn't? What should you do differently in the next step?"
)
CONTINUE_PROMPT = (
    "Now go on with the task, using what you just reflected on. When the task is done, say so in an answer "
    "that calls no tool."
)


@dataclass(slots=True)
class Reflexion(Strategy):
    """Steps as ReAct does; after every ``reflect_every`` tool calls, a reflection before the next request.

    Args:
        config: the limits and hooks of a run.
        max_steps: the turn limit, when given (else ``config.max_steps``).
        reflect_every: tool calls between reflections (at least 1).
        verify: a command run in the workspace before each reflection; its result is the critique.
    """

    reflect_every: int = 3
    verify: str | None = None
    name: str = "reflexion"

    def __post_init__(self) -> None:
        if self.reflect_every < 1:
            raise ValueError(f"reflect_every must be at least 1, not {self.reflect_every}")
        Strategy.__post_init__(self)

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        await core.user_turn(task)
        calls = 0
        reflecting = False  # the reflection prompt is the last thing asked: a text-only reply is a note
        while True:
            result = await core.step()
            if result.outcome is not None:
                if not (reflecting and result.outcome.reason == "completed"):
                    return result.outcome
                reflecting = False  # the reply was the reflection itself: back to the task
                core.note(CONTINUE_PROMPT)
                continue
            if result.calls:
                reflecting = False  # the model answered the reflection by going on with the work
            calls += len(result.calls)
            if calls >= self.reflect_every:
                calls = 0
                text = await self._critique(core) + REFLECTION_PROMPT
                core.note(text)
                core.emit(Reflected(text=text))
                reflecting = True

    async def _critique(self, core: Core) -> str:
        """The verifier's verdict, to lead the reflection; nothing without a verifier."""
        if self.verify is None:
            return ""
        passed, output = await core.check(self.verify)
        verdict = "passed" if passed else "failed"
        return f"The check `{self.verify}` {verdict}. Its output ends:\n{output[-2000:].strip()}\n\n"
