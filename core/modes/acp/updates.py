"""Provides ``Updates``: the events of a session's bus as ACP ``session/update`` notifications.

Text and thinking stream as ``agent_message_chunk`` and ``agent_thought_chunk`` (a reflection is a thought
too); a tool call is a ``tool_call`` when it starts (its kind, title, locations, and for an edit its diff), a
``tool_call_update`` while a command prints (its output so far) and another when it ends (``completed``, or
``failed`` for a call that failed, was refused, declined or cancelled, with its output); a plan run's
checklist is a ``plan``. A session loaded again (``replay``) is told from the events ``branch_events``
makes of its active branch: there the person's words come as ``user_message_chunk`` and each answer whole
from its ``message_completed``, where a live run has already streamed them.

Tool calls get ids unique in the session: the model's own ids may repeat (a local server numbers them from 1
at every start), so a repeated one is told apart by a suffix.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from acp.helpers import (
    SessionUpdate,
    image_block,
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message,
    update_user_message_text,
)
from acp.schema import ToolCallStatus

from chimera.core import events as ev
from chimera.core.events import StepEvent, ignored
from chimera.core.modes.acp.plan import PlanEntries
from chimera.core.modes.acp.tool_calls import content_of, diff_of, fenced, kind_of, locations_of, title_of

__all__ = ["NOT_SENT", "Updates", "coalesced"]

LIVE_OUTPUT = 8000  # characters of a running command's latest output a client is shown

NOT_SENT = frozenset(
    {
        ev.RunFinished,
        ev.TurnStarted,
        ev.UsageReported,
        ev.RetryScheduled,
        ev.PermissionRequested,  # asked through session/request_permission (``questions``)
        ev.PermissionDecided,
        ev.ReminderInjected,
        ev.SteeringReturned,
        ev.CandidateProposed,
        ev.CandidateChosen,
        ev.CompactionDone,
        ev.ControlRejected,
        ev.PlanSuggested,
        ev.CheckpointCreated,
        ev.BranchCreated,
        ev.Switched,
        ev.BranchSummarized,
    }
)


class Updates:
    """Turns one session's events into updates, in order; ``replay`` for a branch told again on load."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.plan = PlanEntries()
        self._open: dict[str, str] = {}  # the model's id of each call going on: its id in the session
        self._used: set[str] = set()
        self._live: dict[str, str] = {}  # by session id: the latest output of a command still running

    def call_id(self, model_id: str) -> str:
        """The session's id of the call going on that the model calls ``model_id`` (itself, when not open)."""
        return self._open.get(model_id, model_id)

    def of(self, event: StepEvent, *, replay: bool = False) -> list[SessionUpdate]:
        """The updates ``event`` makes (none for an event a client is not shown)."""
        match event:
            case ev.TextDelta(text=text):
                return [update_agent_message_text(text)] if text else []
            case ev.ThinkingDelta(text=text) | ev.Reflected(text=text):
                return [update_agent_thought_text(text)] if text else []
            case ev.ToolCallStarted(call_id=model_id, name=name, args=args):
                return [self._started(model_id, name, args)]
            case ev.ToolOutputDelta(call_id=model_id, text=text):
                return self._printed(model_id, text)
            case ev.ToolCallFinished():
                return [self._finished(event)]
            case ev.PlanProposed() | ev.PlanApproved() | ev.PlanEdited() | ev.Replanned() | ev.PlanStepChecked():
                self.plan.apply(event)
                return [self.plan.update()]
            case ev.PlanCancelled():
                self.plan.apply(event)
                return []
            case ev.RunStarted(task=task):
                return _said(task) if replay else []  # live, the client shows the words it sent
            case ev.SteeringDelivered(text=text):
                return [update_user_message_text(text)] if replay else []
            case ev.MessageCompleted(message=message):
                return _answer(message) if replay else []  # live, it streamed as deltas
            case _:
                ignored(event, NOT_SENT)
                return []

    def _new_id(self, model_id: str) -> str:
        call, n = model_id, 1
        while call in self._used:
            n += 1
            call = f"{model_id}~{n}"
        self._used.add(call)
        return call

    def _started(
        self, model_id: str, name: str, args: dict[str, Any], status: ToolCallStatus = "pending", content: Any = None
    ) -> SessionUpdate:
        call = self._new_id(model_id)
        if status == "pending":
            self._open[model_id] = call
            content = diff_of(self.workdir, name, args)
        return start_tool_call(
            call,
            title_of(name, args),
            kind=kind_of(name, args),
            status=status,
            content=content or None,
            locations=locations_of(self.workdir, name, args) or None,
            raw_input=args,
        )

    def _printed(self, model_id: str, text: str) -> list[SessionUpdate]:
        call = self._open.get(model_id)
        if call is None or not text:
            return []
        shown = (self._live.get(call, "") + text)[-LIVE_OUTPUT:]
        self._live[call] = shown
        return [update_tool_call(call, status="in_progress", content=[tool_content(text_block(fenced(shown)))])]

    def _finished(self, event: ev.ToolCallFinished) -> SessionUpdate:
        failed = event.is_error or event.status in ("failed", "refused", "declined", "cancelled", "skipped")
        status: ToolCallStatus = "failed" if failed else "completed"
        content = content_of(self.workdir, event.name, event.args, event.output, failed=failed)
        call = self._open.pop(event.call_id, None)
        if call is None:  # a call that never started (the run stopped first): shown once, as it ended
            return self._started(event.call_id, event.name, event.args, status, content)
        self._live.pop(call, None)
        return update_tool_call(call, status=status, content=content, raw_output={"output": event.output})


def _said(task: str | list[dict[str, Any]]) -> list[SessionUpdate]:
    """The person's words of a task: its text, and its pictures."""
    if isinstance(task, str):
        return [update_user_message_text(task)] if task else []
    updates: list[SessionUpdate] = []
    for block in task:
        if block.get("type") == "text" and block.get("text"):
            updates.append(update_user_message_text(str(block["text"])))
        elif block.get("type") == "image" and isinstance(block.get("source"), dict):
            source = block["source"]
            if source.get("type") == "base64":
                updates.append(update_user_message(image_block(str(source["data"]), str(source["media_type"]))))
    return updates


def _answer(message: dict[str, Any]) -> list[SessionUpdate]:
    """An assistant message told whole: its thinking and its text, in order (its calls come as their own)."""
    content = message.get("content")
    if isinstance(content, str):
        return [update_agent_message_text(content)] if content else []
    updates: list[SessionUpdate] = []
    for block in content or []:
        if block.get("type") == "text" and block.get("text"):
            updates.append(update_agent_message_text(str(block["text"])))
        elif block.get("type") == "thinking" and block.get("thinking"):
            updates.append(update_agent_thought_text(str(block["thinking"])))
    return updates


def coalesced(events: list[StepEvent]) -> list[StepEvent]:
    """``events`` with each run of text deltas, of thinking deltas, or of one command's output, joined into one:
    a reply streaming at a hundred deltas a second reaches the client as a few updates a batch."""
    out: list[StepEvent] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, ev.TextDelta | ev.ThinkingDelta) and type(last) is type(event):
            out[-1] = replace(event, text=last.text + event.text)
        elif isinstance(event, ev.ToolOutputDelta) and isinstance(last, ev.ToolOutputDelta):
            if last.call_id == event.call_id:
                out[-1] = replace(event, text=last.text + event.text, skipped=last.skipped + event.skipped)
            else:
                out.append(event)
        else:
            out.append(event)
    return out
