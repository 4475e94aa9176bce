"""Provides ``branch_events``: a session's active branch as the step events a live run of it published.

A front end shows a resumed session by feeding these to the same reducer that
reads a live run, so history looks like what the person saw: their messages,
thinking, answers, every tool call with its result, steering, compactions, and a
plan run's plan as it was proposed, decided and checked off (:class:`PlanTeller`).
The tree holds the messages (the branch exactly, whatever was switched since);
``events.jsonl`` adds what only the events knew, each call's duration and data
(an edit's diff), matched by the call's place in the tree (the message that
made it, and its id there), never by the provider's id alone, and what the
messages cannot tell of a plan (that it was cancelled, a ``--verify`` check
of the last step). A log that is missing, unreadable or damaged only costs those details (a run whose words the
tree marks as left out still ends there, saying so). Each node is read as
``sessions.reading`` reads it, as every other reader of a session does.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

from chimera.core.errors import ChimeraError
from chimera.core.events import (
    BranchSummarized,
    CompactionDone,
    MessageCompleted,
    PlanCancelled,
    PlanStepChecked,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SteeringDelivered,
    StepEvent,
    ToolCallFinished,
    ToolCallStarted,
    event_from_dict,
)
from chimera.core.gc_pause import collecting_later
from chimera.core.loops.base import ENDED_LEAVING_OUT
from chimera.core.sessions.files import EVENTS, open_file
from chimera.core.sessions.jsonl import lines_backwards, read_all
from chimera.core.sessions.reading import (
    Answer,
    Carried,
    Continuation,
    Damaged,
    Note,
    Reader,
    Reading,
    Result,
    Results,
    Steer,
    Summary,
    Task,
    left_out_of,
)
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import LEFT_OUT_REASONS, Node
from chimera.core.tools.base import CALL_STATUSES, ToolResult, status_of_text
from chimera.core.wording import Ending, describe_ending

__all__ = [
    "UNKNOWN_DURATION",
    "Logged",
    "PlanTeller",
    "branch_events",
    "last_ending",
    "logged_duration",
    "logged_status",
    "read_log",
]

_E = TypeVar("_E", bound=StepEvent)

UNKNOWN_DURATION = -1.0  # a call whose duration the log does not hold (no log, or an older session)

Calls = dict[tuple[str, str], dict[str, Any]]  # by the call's place in the tree (Call.key)


def branch_events(store: SessionStore) -> list[StepEvent]:
    """The events that tell the active branch, oldest first."""
    with collecting_later():
        return _branch_events(store)


def _branch_events(store: SessionStore) -> list[StepEvent]:
    logged = read_log(store)
    model = str(store.meta.get("model", ""))
    out: list[StepEvent] = []
    continued = 0  # continue prompts in a row: the retry number a live run showed
    readings = list(Reader(store.tree).path())
    plans = PlanTeller(logged)
    left_out: list[str] = []  # the nodes of the words left out just before this one
    for index, reading in enumerate(readings):
        node = reading.node
        continued = continued + 1 if isinstance(reading, Continuation) else 0
        compaction = logged.compactions.get(node.id)
        told = [compaction] if compaction is not None else _told(reading, logged.calls, model, continued)
        told += plans.told(reading)
        out += [dataclasses.replace(event, node_id=node.id, ts=node.ts) for event in told]
        ends = logged.ends.get(node.id, [])
        out += ends  # the runs that ended here, as they ended
        why = left_out_of(reading)
        if why:
            left_out.append(node.id)
            last = index + 1 == len(readings) or not left_out_of(readings[index + 1])
            if last and not any(isinstance(end, RunFinished) and end.left_out for end in ends):
                out.append(_left_out_end(node, why, left_out))  # the log lost how the run ended: the tree says
            left_out = [] if last else left_out
    return out


def _left_out_end(node: Node, why: str, nodes: list[str]) -> RunFinished:
    """The end of a run whose words the tree marks as left out, for a log that does not hold it."""
    return RunFinished(
        node_id=node.id,
        ts=node.ts,
        success=False,
        reason=ENDED_LEAVING_OUT[why],
        steps=0,
        cost=0.0,
        left_out=why,
        left_out_nodes=list(nodes),
    )


def _told(reading: Reading, finished: Calls, model: str, continued: int) -> list[StepEvent]:
    """The events a live run published for what ``reading`` holds (a damaged record: none, the rest still shows)."""
    match reading:
        case Task(text=text, content=content):
            return [RunStarted(task=text if isinstance(content, str) else content, model=model, loop="")]
        case Steer(texts=texts):
            return [SteeringDelivered(text=text) for text in texts]
        case Continuation():
            return [RetryScheduled(reason="max_tokens", attempt=continued, wait_s=0.0, discards_partial=False)]
        case Answer(message=message, calls=calls):
            started = [ToolCallStarted(call_id=c.id, name=c.name, args=c.args) for c in calls]
            return [MessageCompleted(message=message), *started]
        case Results(results=results):
            return [_finished(result, finished.get(result.call.key, {})) for result in results]
        case Summary(summary=summary):
            return [CompactionDone(summary=summary, reason="")]
        case Carried(summary=summary):
            return [BranchSummarized(summary=summary)]
        case Note() | Damaged():
            return []


def _finished(result: Result, logged: dict[str, Any]) -> StepEvent:
    duration = logged_duration(logged.get("duration_ms"))
    data = logged.get("data")
    call = result.call
    return ToolCallFinished(
        call_id=call.id,
        name=call.name,
        args=call.args,
        is_error=result.is_error,
        duration_ms=UNKNOWN_DURATION if duration is None else duration,
        output=result.text,
        data=data if isinstance(data, dict) else {},
        status=logged_status(logged, result),
    )


def logged_status(event: Mapping[str, Any], result: Result | ToolResult) -> str:
    """How a recorded call ended: the status its logged event gives, or, for a log from before calls carried
    one (or none at all), what its result's words say."""
    status = event.get("status")
    if isinstance(status, str) and status in CALL_STATUSES:
        return status
    text, is_error = (result.text, result.is_error) if isinstance(result, Result) else (result.output, result.is_error)
    return status_of_text(text, is_error)


def logged_duration(value: object) -> float | None:
    """A duration read from the log in milliseconds, or None when it is not one (the log may be crafted)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value >= 0:
        return float(value)
    return None


@dataclass(frozen=True, slots=True)
class Logged:
    """What only a session's event log holds: each finished call's event as JSON by the call's place
    (:attr:`Call.key`: durations, data such as diffs), the ends of runs by the node they ended at,
    each compaction's event (why, how much) by its node, and the plan's cancellations and checks by
    the node they were published at."""

    calls: Calls = field(default_factory=dict)
    ends: dict[str, list[StepEvent]] = field(default_factory=dict)
    compactions: dict[str, CompactionDone] = field(default_factory=dict)
    plans: dict[str, list[PlanCancelled | PlanStepChecked]] = field(default_factory=dict)


class PlanTeller:
    """Tells the plan's events of each node of a branch, read in order: those its reading tells
    (``sessions.reading``), then those only the log kept there (a plan cancelled, a ``--verify`` check
    the messages show only later or never), each check once."""

    def __init__(self, logged: Logged) -> None:
        self.logged = logged.plans
        self._checks: set[tuple[int, str, int]] = set()  # the checks told in this run: step, its words, attempt

    def told(self, reading: Reading) -> list[StepEvent]:
        """The plan's events of the node ``reading`` reads (the next node of the branch), in the order published."""
        if isinstance(reading, Task):
            self._checks.clear()
        read = reading.plan if isinstance(reading, Answer | Note) else ()
        out: list[StepEvent] = []
        for event in (*read, *self.logged.get(reading.node.id, ())):
            if isinstance(event, PlanStepChecked):
                check = (event.index, event.step, event.attempt)
                if check in self._checks:
                    continue
                self._checks.add(check)
            out.append(event)
        return out


def read_log(store: SessionStore) -> Logged:
    """The session's log as :class:`Logged`; a log that is missing, unreadable or damaged gives what it can."""
    try:
        fd = open_file(store.folder, EVENTS, os.O_RDONLY)
    except (OSError, ChimeraError):  # absent, a link, not a file: the details are lost, nothing else
        return Logged()
    try:
        raw = read_all(fd)
    finally:
        os.close(fd)
    calls: Calls = {}
    ends: dict[str, list[StepEvent]] = {}
    compactions: dict[str, CompactionDone] = {}
    plans: dict[str, list[PlanCancelled | PlanStepChecked]] = {}
    for line in raw.splitlines():
        if not any(kind in line for kind in _KEPT):
            continue
        try:
            data = json.loads(line)
            event = event_from_dict(data) if isinstance(data, dict) else None
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(event, ToolCallFinished) and isinstance(event.node_id, str):
            calls[(event.node_id, event.call_id)] = data  # published while the asking message was the leaf
        elif isinstance(event, RunFinished) and isinstance(event.node_id, str) and _sound_end(event):
            ends.setdefault(event.node_id, []).append(event)
        elif isinstance(event, CompactionDone) and isinstance(event.node_id, str) and _sound_compaction(event):
            compactions[event.node_id] = event
        elif isinstance(event, PlanCancelled | PlanStepChecked) and isinstance(event.node_id, str) and _sound(event):
            plans.setdefault(event.node_id, []).append(event)
    return Logged(calls, ends, compactions, plans)


_KEPT = (b'"tool_call_finished"', b'"run_finished"', b'"compaction"', b'"plan_cancelled"', b'"plan_step_checked"')


def last_ending(store: SessionStore) -> Ending | None:
    """How the session's last run ended, from the end of its log (only what follows that run's start is
    read); None when no run is logged. A run that started and never ended (Chimera was stopped, or is
    still working) is ``unfinished``."""
    try:
        fd = open_file(store.folder, EVENTS, os.O_RDONLY)
    except (OSError, ChimeraError):
        return None
    try:
        for line in lines_backwards(fd):
            if b'"run_started"' in line and _logged_as(line, RunStarted) is not None:
                return Ending("unfinished", "Chimera stopped before the run ended", "the run did not end")
            if b'"run_finished"' in line and (end := _logged_as(line, RunFinished)) is not None and _sound_end(end):
                return describe_ending(end.success, end.reason, end.error)
    finally:
        os.close(fd)
    return None


def _logged_as(line: bytes, kind: type[_E]) -> _E | None:
    try:
        data = json.loads(line)
        event = event_from_dict(data) if isinstance(data, dict) else None
    except (ValueError, TypeError, KeyError):
        return None
    return event if isinstance(event, kind) else None


def _sound_end(event: RunFinished) -> bool:
    """Whether a logged run end has the types it is read with (the log is the record, not checked on write)."""
    return (
        isinstance(event.success, bool)
        and isinstance(event.steps, int)
        and isinstance(event.cost, int | float)
        and isinstance(event.reason, str)
        and isinstance(event.error, str)
        and event.left_out in ("", *LEFT_OUT_REASONS)
        and isinstance(event.left_out_nodes, list)
        and all(isinstance(node, str) for node in event.left_out_nodes)
    )


def _sound(event: PlanCancelled | PlanStepChecked) -> bool:
    """Whether a logged plan event has the types it is read with."""
    if isinstance(event, PlanCancelled):
        return isinstance(event.reason, str)
    return (
        isinstance(event.index, int)
        and not isinstance(event.index, bool)
        and isinstance(event.passed, bool)
        and isinstance(event.attempt, int)
        and all(isinstance(text, str) for text in (event.step, event.by, event.detail))
    )


def _sound_compaction(event: CompactionDone) -> bool:
    return (
        isinstance(event.summary, str)
        and isinstance(event.reason, str)
        and isinstance(event.tokens_before, int)
        and isinstance(event.tokens_after, int)
    )
