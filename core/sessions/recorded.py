"""Provides ``recorded_runs``: one branch of a stored session as the runs that made it, for a replay.

The branch is the path from the root to one node (the leaf by default), read
as ``sessions.reading`` reads every session. It is split into its runs at the
person's prompts, so a session that was resumed, or switched back and resumed
with another task, plays each run with its own turns (a prompt no answer
followed joins the next, as the loop sent them, unless it was left out of the
conversation: then it is a run of its own, ending where it was left out). A run holds the model's
messages in order, every call with its recorded result (known by its place in
the tree, so a provider that reused an id never gets another call's result),
and where the recording stops before the run answered (interrupted, killed,
switched away from, or a plan run that stopped at its plan or after a note of
its own). What a plan run published of its plan comes back in its places, as
every reader has it (``history.PlanTeller``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chimera.core.errors import ConfigError, SessionError
from chimera.core.events import PlanCancelled, PlanProposed, Replanned, StepEvent
from chimera.core.loops.playback import Beat
from chimera.core.messages import content_blocks
from chimera.core.providers.replay import RecordedTurn
from chimera.core.sessions.history import Logged, PlanTeller, logged_duration, logged_status
from chimera.core.sessions.reading import (
    Answer,
    Continuation,
    Damaged,
    Note,
    Reader,
    Reading,
    Results,
    Steer,
    Summary,
    Task,
    left_out_of,
    result_text,
)
from chimera.core.sessions.tree import Node, SessionTree
from chimera.core.tools.base import ToolResult
from chimera.core.tools.executor import NOT_FINISHED, ToolCall
from chimera.core.tools.recorded import Recorded, Served

__all__ = ["LONGEST_TURN", "RecordedRun", "recorded_runs"]

LONGEST_TURN = 60.0  # seconds: the most a replay at 1× spends on one recorded turn

CallKey = tuple[str, str]  # the node of the message that made a call, and its id there


@dataclass(frozen=True, slots=True)
class RecordedRun:
    """One run of a recorded branch.

    ``prompt`` is the id of the user node that started it and ``task`` its content (two
    prompts in a row are one: the first got no answer); ``turns`` the model's messages;
    ``calls`` every call in the order made, each with its place (``keys``, one per call);
    ``results`` every call's recorded result by place, a call the branch has no result for
    answered as a resume answers it; ``stops_at`` the node where the recording stops before
    the run answered (None when it answered); ``permissions`` what the run was started with,
    if recorded. ``beats`` is what the run did after its task, in order (the model's turns,
    the person's steering, the loop's notes, compactions: a compaction's summary is one of
    ``turns``, served when the replay asks for it); ``lead`` what happened between the run
    before and this one's task (a compaction asked for by hand); ``left_out`` why the words the
    run ends on were left out of the conversation (``refused``, ``declined``, ``interrupted``;
    empty: they were not).
    """

    prompt: str
    task: Any
    turns: tuple[RecordedTurn, ...]
    calls: tuple[ToolCall, ...]
    keys: tuple[CallKey, ...]
    results: Mapping[CallKey, ToolResult]
    stops_at: str | None
    permissions: Mapping[str, Any] | None
    beats: tuple[Beat, ...] = ()
    lead: tuple[Beat, ...] = ()
    left_out: str = ""

    def placed(self) -> list[tuple[CallKey, ToolCall, ToolResult]]:
        """Each call in order, with its place and its recorded result."""
        return [(key, call, self.results[key]) for key, call in zip(self.keys, self.calls, strict=True)]

    def served(self, logged: Mapping[CallKey, Mapping[str, Any]], only: set[CallKey] | None = None) -> Recorded:
        """The recorded results to serve in place of running the calls (those in ``only``, when given), with
        the data and duration the session's log kept for each (``logged``, by place). The log may be
        crafted: a field of the wrong type is left out."""
        entries = []
        for key, call, result in self.placed():
            if only is not None and key not in only:
                continue
            event = logged.get(key, {})
            data, took = event.get("data"), event.get("duration_ms")
            data = dict(data) if isinstance(data, dict) else {}
            result = ToolResult(result.output, result.is_error, data, logged_status(event, result))
            entries.append((call.id, Served(result, logged_duration(took))))
        return Recorded(entries)


def recorded_runs(
    tree: SessionTree,
    node_id: str | None = None,
    compacted: Mapping[str, str] | None = None,
    logged: Logged | None = None,
) -> list[RecordedRun]:
    """The runs of the branch from the root to ``node_id`` (the leaf when None), in order.

    ``compacted`` says why each compaction happened, by its node (from the session's log; a
    compaction it does not name replays as one the threshold asked for); ``logged`` (the session's
    log) what only it kept of a plan. Raises ConfigError when the branch does not start with a
    prompt, SessionError when one of its records is damaged.
    """
    reader = Reader(tree)
    path = [reader.read(node.id) for node in tree.path(node_id)]
    plans = PlanTeller(logged or Logged())
    runs: list[_Building] = []
    for index, reading in enumerate(path):
        node = reading.node
        planned = plans.told(reading)
        if isinstance(reading, Damaged):
            raise SessionError(reading.why)  # a replay cannot play past a hole in the recording
        following = path[index + 1] if index + 1 < len(path) else None
        if isinstance(reading, Task):
            earlier = path[index - 1] if index else None
            joined = isinstance(earlier, Task) and not (earlier.left_out or reading.left_out)
            if runs and joined and not runs[-1].stepped:
                runs[-1].add_prompt(reading)  # the earlier prompt got no answer: one turn, as the loop sent it
            else:
                lead, summaries = runs[-1].trailing() if runs else ((), [])
                runs.append(_Building(reading, tree.permissions.get(node.id), lead, summaries))
        elif not runs:
            raise ConfigError(f"node {node.id} comes before any prompt, so this branch cannot be replayed")
        elif isinstance(reading, Answer):
            runs[-1].add_turn(reading, isinstance(following, Continuation), _took(path[index - 1].node, node))
            runs[-1].add_plan(planned)
        elif isinstance(reading, Results):
            runs[-1].add_results(reading)
        elif isinstance(reading, Summary):
            why = (compacted or {}).get(node.id, "threshold")
            runs[-1].add_compaction(reading, why, _took(path[index - 1].node, node))
        else:
            runs[-1].add_plan(planned)  # published before the note was written: the run decided, or checked
            runs[-1].add_words(reading)
    return [run.done(tree.partials) for run in runs]


class _Building:
    """A run of the branch as it is read, node by node."""

    def __init__(
        self,
        prompt: Task,
        permissions: Mapping[str, Any] | None,
        lead: tuple[Beat, ...] = (),
        summaries: list[RecordedTurn] | None = None,
    ) -> None:
        self.lead = lead
        self.beats: list[Beat] = []
        self.prompt = prompt.node.id
        self.task = prompt.content
        self.permissions = permissions
        self.turns: list[RecordedTurn] = list(summaries or [])  # the lead's summaries are asked for first
        self.calls: list[ToolCall] = []
        self.keys: list[CallKey] = []
        self.results: dict[CallKey, ToolResult] = {}
        self.last = prompt.node.id
        self.answered = False
        self.left_out = prompt.left_out  # why the words the run ends on so far are left out

    @property
    def stepped(self) -> bool:
        """Whether the model has answered in this run yet."""
        return any(beat.kind == "step" for beat in self.beats)

    def add_prompt(self, prompt: Task) -> None:
        self.task = content_blocks(self.task) + content_blocks(prompt.content)
        self.last = prompt.node.id
        self.left_out = prompt.left_out

    def add_turn(self, answer: Answer, continued: bool, seconds: float) -> None:
        stop = "tool_use" if answer.calls else "end_turn"
        if continued:
            stop = "max_tokens"  # the loop asked the model to go on
        self.turns.append(RecordedTurn(message=answer.message, stop_reason=stop, seconds=seconds))
        self.beats.append(Beat("step"))
        self.calls += [ToolCall(c.id, c.name, c.args) for c in answer.calls]
        self.keys += [c.key for c in answer.calls]
        self.last = answer.node.id
        self.answered = stop == "end_turn"
        self.left_out = ""

    def add_words(self, reading: Reading) -> None:
        """The person's steering and the loop's notes come back in their places (a continue prompt the
        loop sends again itself). After a note of the loop's, the run answers again."""
        if isinstance(reading, Steer):
            self.beats += [Beat("steer", text) for text in reading.texts]
        elif isinstance(reading, Note):
            self.beats += [Beat("note", text) for text in reading.texts]
            self.answered = False
        self.last = reading.node.id
        self.left_out = left_out_of(reading)

    def add_plan(self, planned: list[StepEvent]) -> None:
        """What the run published of its plan, in its place. A plan proposed (or revised), or cancelled, is not
        the run's answer: a recording that stops there stops before it."""
        self.beats += [Beat("plan", event=event) for event in planned]
        if any(isinstance(event, PlanProposed | Replanned | PlanCancelled) for event in planned):
            self.answered = False

    def add_compaction(self, summary: Summary, why: str, seconds: float) -> None:
        """The compaction happens again, its summary served as the model's answer to the summary request."""
        message = {"role": "assistant", "content": [{"type": "text", "text": summary.summary}]}
        self.turns.append(RecordedTurn(message=message, stop_reason="end_turn", seconds=seconds))
        self.beats.append(Beat("compact", why))
        self.last = summary.node.id
        self.left_out = ""

    def trailing(self) -> tuple[tuple[Beat, ...], list[RecordedTurn]]:
        """What this run did after it answered, taken out of it for the next run to do before its task:
        a compaction asked for by hand between runs (its beat, and its summary's turn)."""
        if not self.answered or not self.beats or self.beats[-1].kind != "compact":
            return (), []
        after = max(index for index, beat in enumerate(self.beats) if beat.kind == "step") + 1
        moved = tuple(self.beats[after:])  # the answer is the last step; only compactions follow it
        self.beats = self.beats[:after]
        count = sum(beat.kind == "compact" for beat in moved)
        summaries, self.turns = self.turns[len(self.turns) - count :], self.turns[: len(self.turns) - count]
        return moved, summaries

    def add_results(self, results: Results) -> None:
        for result in results.results:
            self.results.setdefault(result.call.key, ToolResult(output=result.text, is_error=result.is_error))
        self.last = results.node.id
        self.answered = False
        self.left_out = ""

    def done(self, partials: Mapping[str, list[dict[str, Any]]]) -> RecordedRun:
        finished = {
            (self.last, str(b.get("tool_use_id"))): ToolResult(result_text(b.get("content")), bool(b.get("is_error")))
            for b in partials.get(self.last, [])
        }
        results = {**finished, **self.results}
        unanswered = ToolResult(NOT_FINISHED, is_error=True, status="cancelled")
        return RecordedRun(
            prompt=self.prompt,
            task=self.task,
            turns=tuple(self.turns),
            calls=tuple(self.calls),
            keys=tuple(self.keys),
            results={key: results.get(key, unanswered) for key in self.keys},
            stops_at=None if self.answered else self.last,
            permissions=self.permissions,
            beats=tuple(self.beats),
            lead=self.lead,
            left_out=self.left_out,
        )


def _took(before: Node, answer: Node) -> float:
    """How long the model took over ``answer``, as recorded: from the message before it (a crafted or
    skewed clock gives 0, a long gap at most ``LONGEST_TURN``, so a replay at 1× never stalls for hours)."""
    seconds = answer.ts - before.ts
    return min(seconds, LONGEST_TURN) if math.isfinite(seconds) and seconds > 0 else 0.0
