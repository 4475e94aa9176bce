"""Provides ``Questions``: what a run asks the person and waits for, by ``request_id``, in the order asked.

A permission request (``permission_requested``) and a proposed plan that needs an
answer (``plan_proposed`` with a ``request_id``) open a question; its answer
(``permission_decided``; ``plan_approved``, ``plan_edited``, ``plan_cancelled``)
closes it, and so does the run's end (``run_finished``: nobody waits any more).
A front end that sends an answer closes the question at once
(:meth:`Questions.close`), before the core's event comes back. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # the events load with the first one (``apply``): the first frame draws none
    from chimera.core.events import StepEvent

__all__ = ["Question", "Questions", "not_asked"]


@cache
def not_asked() -> frozenset[type[StepEvent]]:
    """The events that ask nothing (the events load with the first one)."""
    from chimera.core import events as ev

    return frozenset(
        {  # the kinds that neither ask nor answer
            ev.BranchCreated,
            ev.BranchSummarized,
            ev.CandidateChosen,
            ev.CandidateProposed,
            ev.CheckpointCreated,
            ev.CompactionDone,
            ev.ControlRejected,
            ev.MessageCompleted,
            ev.PlanStepChecked,
            ev.PlanSuggested,
            ev.Reflected,
            ev.ReminderInjected,
            ev.Replanned,
            ev.RetryScheduled,
            ev.RunStarted,
            ev.SteeringDelivered,
            ev.SteeringReturned,
            ev.Switched,
            ev.TextDelta,
            ev.ThinkingDelta,
            ev.ToolCallFinished,
            ev.ToolCallStarted,
            ev.ToolOutputDelta,
            ev.TurnStarted,
            ev.UsageReported,
        }
    )


@dataclass(frozen=True, slots=True)
class Question:
    """One open question. ``kind`` is ``permission`` (a tool call: ``call_id``, ``name``, ``args``, when it is
    not a plain one the ``reason`` it is asked, and the ``preview`` of what it would do when its tool can say)
    or ``plan`` (its ``steps``)."""

    request_id: str
    kind: Literal["permission", "plan"]
    call_id: str = ""
    name: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    reason: str = ""
    steps: tuple[str, ...] = ()
    preview: str = ""
    outside_sandbox: bool = False  # the sandbox refused the command: may it run again outside it, once?


class Questions:
    """The open questions, oldest first."""

    def __init__(self) -> None:
        self._open: dict[str, Question] = {}  # by request id, in the order asked

    def __len__(self) -> int:
        return len(self._open)

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._open

    @property
    def open(self) -> list[Question]:
        """Every open question, oldest first."""
        return list(self._open.values())

    @property
    def first(self) -> Question | None:
        """The oldest open question (the one to answer next), if any."""
        return next(iter(self._open.values()), None)

    @property
    def plan(self) -> Question | None:
        """The plan waiting for an answer, if one is."""
        return next((q for q in self._open.values() if q.kind == "plan"), None)

    def close(self, request_id: str) -> None:
        """The question ``request_id`` is answered (or no longer open): it leaves."""
        self._open.pop(request_id, None)

    def clear(self) -> None:
        self._open.clear()

    def apply(self, event: StepEvent) -> None:
        """Open or close questions as one event says."""
        from chimera.core.events import (  # (loaded with the first one)
            PermissionDecided,
            PermissionRequested,
            PlanApproved,
            PlanCancelled,
            PlanEdited,
            PlanProposed,
            RunFinished,
            ignored,
        )

        match event:
            case PermissionRequested(request_id=request_id, call_id=call_id, name=name, args=args, reason=reason):
                question = Question(
                    request_id,
                    "permission",
                    call_id,
                    name,
                    dict(args),
                    reason,
                    preview=event.preview,
                    outside_sandbox=event.outside_sandbox,
                )
                self._open[request_id] = question
            case PermissionDecided(request_id=request_id):
                self.close(request_id)  # answered, or withdrawn (cancelled): either way nobody waits
            case PlanProposed(request_id=request_id, steps=steps):
                if request_id:  # without one, nobody is asked (approved as proposed, or headless)
                    self._open[request_id] = Question(request_id, "plan", steps=tuple(steps))
            case PlanApproved() | PlanEdited() | PlanCancelled():
                for question in [q for q in self._open.values() if q.kind == "plan"]:
                    self.close(question.request_id)
            case RunFinished():
                self.clear()
            case _:
                ignored(event, not_asked())
