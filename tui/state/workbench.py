"""Provides ``WorkbenchState``: everything the workbench shows, kept up by one :meth:`WorkbenchState.apply`.

The conversation (``transcript``), the questions a run waits on (``questions``),
the plan and its checks (``plan``), where the run stands (``status``), the
follow-ups queued for after the run (``follow_ups``) and the words a run handed
back unread (``returned``, taken by the front end for its input). A live run
feeds every part; a session's history (:meth:`WorkbenchState.tell`) feeds only
the conversation and the plan: it asks nothing and counts no tokens again.
No Textual here: widgets are views of it, tests drive it without a screen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from functools import cache
from typing import TYPE_CHECKING

from chimera.core.messages import prompt_text
from chimera.tui.state.plan import PlanState
from chimera.tui.state.questions import Questions
from chimera.tui.state.run_status import RunStatus
from chimera.tui.state.transcript import Transcript

if TYPE_CHECKING:  # the events load with the first one (``apply``): the first frame draws none
    from chimera.core.events import StepEvent

__all__ = ["WorkbenchState", "not_kept"]


@cache
def not_kept() -> frozenset[type[StepEvent]]:
    """The events the workbench's own state leaves to its parts (the events load with the first one)."""
    from chimera.core import events as ev

    return frozenset(
        {  # the kinds only the parts read
            ev.BranchCreated,
            ev.BranchSummarized,
            ev.CandidateChosen,
            ev.CandidateProposed,
            ev.CheckpointCreated,
            ev.CompactionDone,
            ev.ControlRejected,
            ev.MessageCompleted,
            ev.PermissionDecided,
            ev.PermissionRequested,
            ev.PlanApproved,
            ev.PlanCancelled,
            ev.PlanEdited,
            ev.PlanProposed,
            ev.PlanStepChecked,
            ev.PlanSuggested,
            ev.Reflected,
            ev.ReminderInjected,
            ev.Replanned,
            ev.RetryScheduled,
            ev.SteeringDelivered,
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


class WorkbenchState:
    """The workbench's state. ``clock`` (monotonic seconds) times running calls."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.transcript = Transcript(clock)
        self.questions = Questions()
        self.plan = PlanState()
        self.status = RunStatus()
        self.follow_ups: list[str] = []  # queued for after the run, in order (the session keeps them too)
        self.returned: list[str] = []  # words a run gave back unread, for the input
        self.left_out: str | None = None  # the newest node of the person's words no answer followed, for /resend

    def apply_all(self, events: Iterable[StepEvent]) -> None:
        for event in events:
            self.apply(event)

    def apply(self, event: StepEvent) -> None:
        """Fold one event of a live run into every part."""
        from chimera.core.events import RunFinished, RunStarted, SteeringReturned, ignored  # (loaded with the first)

        self.transcript.apply(event)
        self.questions.apply(event)
        self.plan.apply(event)
        self.status.apply(event)
        match event:
            case RunStarted(task=task):
                text = task if isinstance(task, str) else prompt_text(task)
                if self.follow_ups and self.follow_ups[0] == text:  # the first follow-up has its run now
                    self.follow_ups.pop(0)
            case SteeringReturned(text=text):
                self.returned.append(text)
            case RunFinished(left_out_nodes=nodes):
                if nodes:
                    self.left_out = nodes[-1]
            case _:
                ignored(event, not_kept())

    def tell(self, events: Iterable[StepEvent]) -> None:
        """A session's history, told again: the conversation and the plan, never a question or a token."""
        from chimera.core.events import RunFinished, RunStarted  # (loaded with the first one)

        for event in events:
            if isinstance(event, RunStarted):
                self.plan.settle()  # told again, the run before is over, whether or not the log said how it ended
            self.transcript.apply(event)
            self.plan.apply(event)
            if isinstance(event, RunFinished) and event.left_out_nodes:
                self.left_out = event.left_out_nodes[-1]
        self.plan.settle()  # nothing runs in a history

    def take_returned(self) -> list[str]:
        """The words handed back since the last call, in the order sent (they are the caller's now)."""
        taken, self.returned = self.returned, []
        return taken

    def new_session(self) -> None:
        """A fresh session: nothing shown, asked, planned, counted or queued."""
        self.transcript.clear()
        self.questions.clear()
        self.plan.clear()
        self.status.restart()
        self.follow_ups.clear()
        self.returned.clear()
        self.left_out = None
