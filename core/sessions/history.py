"""Provides ``branch_events``: a session's active branch as the step events a live run of it published.

A front end shows a resumed session by feeding these to the same reducer that
reads a live run, so history looks like what the person saw: their messages,
thinking, answers, every tool call with its result, steering, compactions. The
tree holds the messages (the branch exactly, whatever was switched since);
``events.jsonl`` adds what only the events knew, each call's duration and data
(an edit's diff, the file its whole output was saved to), matched by the
message that made the call and the call's id: a provider's ids repeat within a
session (a local server numbers them from 1 at each start), so an id alone could
name another call. A log that is missing, unreadable or damaged only costs those
details.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Any

from chimera.core.errors import ChimeraError, SessionError
from chimera.core.events import (
    CompactionDone,
    MessageCompleted,
    RunFinished,
    RunStarted,
    SteeringDelivered,
    StepEvent,
    ToolCallFinished,
    ToolCallStarted,
    event_from_dict,
)
from chimera.core.loops.compaction import SUMMARY_PREFIX
from chimera.core.loops.context import content_blocks, is_continue_prompt, is_loop_note, is_reminder, steering_text
from chimera.core.sessions.files import EVENTS, open_file
from chimera.core.sessions.jsonl import read_all
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import Node

__all__ = ["UNKNOWN_DURATION", "LoggedCalls", "branch_events", "logged_calls"]

UNKNOWN_DURATION = -1.0  # a call whose duration the log does not hold (no log, or an older session)

Calls = dict[str, dict[str, Any]]  # the calls of the branch read so far, by call id: the latest one of each id


class LoggedCalls:
    """Each finished call's event in the session's log, as JSON, found by where the call was made.

    A call's ``tool_call_finished`` event carries the node of the assistant message that made
    the call; that node and the call's id name one call, where the id alone may name several.
    """

    def __init__(self) -> None:
        self._events: dict[tuple[str | None, str], dict[str, Any]] = {}

    def add(self, node_id: str | None, call_id: str, event: dict[str, Any]) -> None:
        self._events[(node_id, call_id)] = event

    def find(self, node_id: str | None, call_id: str) -> dict[str, Any]:
        """The event of call ``call_id`` made in the message at ``node_id`` (empty when the log has none).

        An event logged without a node (none is, today) is taken for any call of its id."""
        return self._events.get((node_id, call_id)) or self._events.get((None, call_id)) or {}

    def __len__(self) -> int:
        return len(self._events)


def branch_events(store: SessionStore) -> list[StepEvent]:
    """The events that tell the active branch, oldest first."""
    finished, ends, compactions = _logged(store)
    calls: Calls = {}
    out: list[StepEvent] = []
    model = str(store.meta.get("model", ""))
    for node in store.tree.path():
        try:
            told = compactions.get(node.id) or _node_events(node, calls, finished, model)
        except SessionError:  # a message damaged on disk: the rest of the branch still shows
            continue
        out += [dataclasses.replace(event, node_id=node.id, ts=node.ts) for event in told]
        out += ends.get(node.id, [])  # the runs that ended here, as they ended
    return out


def _node_events(node: Node, calls: Calls, finished: LoggedCalls, model: str) -> list[StepEvent]:
    message = node.message
    blocks = content_blocks(message.get("content"))
    if node.kind == "compaction":
        said = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        summary = next(
            (t.removeprefix(SUMMARY_PREFIX) for t in said if t.startswith(SUMMARY_PREFIX)), "\n\n".join(said)
        )
        return [CompactionDone(summary=summary, reason="")]
    if node.kind == "assistant":
        events: list[StepEvent] = [MessageCompleted(message=message)]
        for block in blocks:
            if block.get("type") == "tool_use":
                given = block.get("input")
                args: dict[str, Any] = given if isinstance(given, dict) else {}
                calls[str(block.get("id"))] = {"name": str(block.get("name")), "args": args, "node": node.id}
                events.append(ToolCallStarted(call_id=str(block.get("id")), name=str(block.get("name")), args=args))
        return events
    if node.kind == "tool_result":
        return [_finished(block, calls, finished) for block in blocks if block.get("type") == "tool_result"]
    if is_continue_prompt(message):
        return []
    steering: list[StepEvent] = [SteeringDelivered(text=text) for text in _steering(blocks)]
    if is_loop_note(message):
        return steering
    text = "\n\n".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text" and not is_reminder(b))
    return [RunStarted(task=text, model=model, loop=""), *steering] if text else steering


def _finished(block: dict[str, Any], calls: Calls, finished: LoggedCalls) -> StepEvent:
    call_id = str(block.get("tool_use_id"))
    call = calls.get(call_id, {"name": "tool", "args": {}, "node": None})
    content = block.get("content")
    output = (
        content
        if isinstance(content, str)
        else "".join(str(b.get("text", "")) for b in content_blocks(content) if b.get("type") == "text")
    )
    logged = finished.find(call["node"], call_id)
    duration = logged.get("duration_ms")
    data = logged.get("data")
    return ToolCallFinished(
        call_id=call_id,
        name=call["name"],
        args=call["args"],
        is_error=bool(block.get("is_error")),
        duration_ms=float(duration) if isinstance(duration, int | float) else UNKNOWN_DURATION,
        output=output,
        data=data if isinstance(data, dict) else {},
    )


def _steering(blocks: list[dict[str, Any]]) -> list[str]:
    return [text for text in map(steering_text, blocks) if text is not None]


def logged_calls(store: SessionStore) -> LoggedCalls:
    """Each finished call's event in the session's log, as JSON (durations, data such as diffs)."""
    return _logged(store)[0]


def _logged(store: SessionStore) -> tuple[LoggedCalls, dict[str, list[StepEvent]], dict[str, list[StepEvent]]]:
    """From the log: each finished call's event by where it was made (durations and data only the events hold),
    the ends of runs by the node they ended at, and compactions (why, how much) by their node."""
    try:
        fd = open_file(store.folder, EVENTS, os.O_RDONLY)
    except (OSError, ChimeraError):  # absent, a link, not a file: the details are lost, nothing else
        return LoggedCalls(), {}, {}
    try:
        raw = read_all(fd)
    finally:
        os.close(fd)
    calls = LoggedCalls()
    ends: dict[str, list[StepEvent]] = {}
    compactions: dict[str, list[StepEvent]] = {}
    for line in raw.splitlines():
        if not any(kind in line for kind in (b'"tool_call_finished"', b'"run_finished"', b'"compaction"')):
            continue
        try:
            data = json.loads(line)
            event = event_from_dict(data) if isinstance(data, dict) else None
        except (ValueError, TypeError, KeyError):
            continue
        if isinstance(event, ToolCallFinished) and isinstance(event.call_id, str):
            calls.add(event.node_id if isinstance(event.node_id, str) else None, event.call_id, data)
        elif isinstance(event, RunFinished) and isinstance(event.node_id, str) and _sound_end(event):
            ends.setdefault(event.node_id, []).append(event)
        elif isinstance(event, CompactionDone) and isinstance(event.node_id, str) and _sound_compaction(event):
            compactions[event.node_id] = [event]
    return calls, ends, compactions


def _sound_end(event: RunFinished) -> bool:
    """Whether a logged run end has the types it is read with (the log is the record, not checked on write)."""
    return (
        isinstance(event.success, bool)
        and isinstance(event.steps, int)
        and isinstance(event.cost, int | float)
        and isinstance(event.reason, str)
        and isinstance(event.error, str)
    )


def _sound_compaction(event: CompactionDone) -> bool:
    return (
        isinstance(event.summary, str)
        and isinstance(event.reason, str)
        and isinstance(event.tokens_before, int)
        and isinstance(event.tokens_after, int)
    )
