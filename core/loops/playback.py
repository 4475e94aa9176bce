"""Provides ``Playback``: the strategy a replay drives, doing between the model's turns what the recording did.

A recorded run is more than the model's messages: the person steered it while
it worked, the loop added notes of its own (a reflection, a plan's next step),
the conversation was compacted. A replay plays those back in their places, as
:class:`Beat`\\ s, so it publishes the same ``steering_delivered`` and
``compaction`` events the run did and the conversation it builds matches the
recording. After the last beat it steps as ReAct does, until the recording's
provider says the recording ends. Words the person sent as the last answer
streamed are queued again when that answer ends the work, and the loop gives
them the turn it gave them then. An answer that ended a piece of the work but
not the run (the plan, a step's verdict, a reflection: the loop's own note
follows it) goes on to the next beat, as the loop did; what a plan run published
of its plan (proposed, decided, each step checked) is published again in its
place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from chimera.core.events import StepEvent
from chimera.core.loops.base import Core, Outcome
from chimera.core.loops.strategy import Strategy
from chimera.core.messages import Prompt

__all__ = ["Beat", "Playback"]


@dataclass(frozen=True, slots=True)
class Beat:
    """One thing a recorded run did, in order.

    ``step``: the model answered (one turn, its calls and their results); ``steer``: the person's
    words (``text``) reached the model before the next request; ``note``: the loop's own note
    (``text``); ``compact``: the conversation was summarized (``text`` says why: ``threshold``,
    ``prompt_too_long``, ``manual``), the summary being the recording's next model turn; ``plan``:
    the run published ``event``, of its plan.
    """

    kind: Literal["step", "steer", "note", "compact", "plan"]
    text: str = ""
    event: StepEvent | None = None


@dataclass(slots=True)
class Playback(Strategy):
    """Plays ``beats`` after the task, then steps until an outcome (the recording's end is one)."""

    beats: tuple[Beat, ...] = ()
    lead: tuple[Beat, ...] = ()
    """What happened after the last run and before this run's task (a compaction asked for by hand)."""
    stops: bool = False
    """The recording stops before the run's answer: after the last beat, the next request finds its end."""
    name: str = "replay"

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        for beat in self.lead:
            await self._play(core, beat)
        await core.user_turn(task)
        beats, index = self.beats, 0
        while index < len(beats):
            beat, index = beats[index], index + 1
            if beat.kind != "step":
                await self._play(core, beat)
                continue
            result = await core.step()
            if result.outcome is None:
                continue
            while index < len(beats) and beats[index].kind == "plan":  # what that answer told of the plan
                await self._play(core, beats[index])
                index += 1
            if index < len(beats) and beats[index].kind == "note":  # the loop went on by itself
                continue
            if index == len(beats) and self.stops:  # the recording ends before the run's answer
                break
            self._late_words(core, index)
            return result.outcome
        while True:
            result = await core.step()
            if result.outcome is not None:
                return result.outcome

    def _late_words(self, core: Core, start: int) -> None:
        """The person's words recorded right after the answer that ended the work: they came as it streamed,
        and the loop gives them the turn they got then."""
        for beat in self.beats[start:]:
            if beat.kind != "steer":
                return
            core.steer(beat.text)

    @staticmethod
    async def _play(core: Core, beat: Beat) -> None:
        if beat.kind == "steer":
            core.steer(beat.text)
        elif beat.kind == "note":
            core.note(beat.text)
        elif beat.kind == "compact":
            await core.compact(reason=beat.text)
        elif beat.event is not None:
            core.emit(beat.event)
