"""Provides ``PlanState``: the plan a run works through, its checks and the step it is on.

``plan_proposed``, ``plan_edited`` and ``replanned`` set the steps (a revision
keeps the checks of the passed steps it leaves as they were); ``plan_approved`` and an edit
start the work; ``plan_step_checked`` marks a step passed or failed, with what the
check said when it failed; ``plan_cancelled`` ends it. ``current`` is the step being
worked on: the first one not yet passed, while the plan is being carried out.
A plan that replaces another (a revision the person asked for, a re-plan)
says what changed: ``changes[i]`` marks each step ``added``, ``changed`` or
kept (""), and ``removed`` holds the steps it left out. No Textual here.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from chimera.core.loops.plans import kept_checks

if TYPE_CHECKING:  # the events load with the first one (``apply``): the first frame draws none
    from chimera.core.events import StepEvent

__all__ = ["PlanState", "not_planned"]


@cache
def not_planned() -> frozenset[type[StepEvent]]:
    """The events that do not change the plan (the events load with the first one)."""
    from chimera.core import events as ev

    return frozenset(
        {  # the kinds that do not change the plan
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
            ev.PlanSuggested,
            ev.Reflected,
            ev.ReminderInjected,
            ev.RetryScheduled,
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


@dataclass(slots=True)
class PlanState:
    """The latest plan of this workbench. ``phase``: ``none`` (no plan yet), ``proposed`` (awaiting approval, or
    shown as proposed), ``working`` (approved or edited, being carried out), ``cancelled`` or ``over`` (its run
    ended). ``checks[i]`` is True (passed), False (failed; ``failures[i]`` says why) or None (not checked yet)."""

    steps: list[str] = field(default_factory=list)
    checks: list[bool | None] = field(default_factory=list)
    failures: dict[int, str] = field(default_factory=dict)
    phase: str = "none"
    why_replanned: str = ""
    changes: list[str] = field(default_factory=list)  # per step: "added", "changed" or "" (as before)
    removed: list[str] = field(default_factory=list)  # the steps of the plan before that this one left out

    @property
    def current(self) -> int | None:
        """The step being worked on (from 0), while the plan is carried out; None otherwise."""
        if self.phase != "working":
            return None
        return next((i for i, check in enumerate(self.checks) if check is not True), None)

    def apply(self, event: StepEvent) -> None:
        """Follow the plan through one event."""
        from chimera.core.events import (  # (loaded with the first one)
            PlanApproved,
            PlanCancelled,
            PlanEdited,
            PlanProposed,
            PlanStepChecked,
            Replanned,
            RunFinished,
            RunStarted,
            ignored,
        )

        match event:
            case PlanProposed(steps=steps):
                before = self.steps if self.phase == "proposed" else []  # a revision of the plan on screen
                self._set(steps, "proposed")
                self._compare(before)
            case PlanEdited(steps=steps):
                self._set(steps, "working")
            case Replanned(steps=steps, why=why):
                kept, before = self._done_before(steps), self.steps
                self._set(steps, "working")
                self._compare(before)
                self.checks[: len(kept)] = kept
                self.why_replanned = why
            case PlanApproved():
                self.phase = "working"
            case PlanStepChecked(index=index, passed=passed, detail=detail):
                if 0 <= index < len(self.checks):
                    self.checks[index] = passed
                    if passed:
                        self.failures.pop(index, None)
                    else:
                        self.failures[index] = detail or "its check failed"
            case PlanCancelled():
                self.phase = "cancelled"
            case RunStarted():
                if self.phase not in {"proposed", "working"}:  # a new task: the last one's plan is history now
                    self.clear()
            case RunFinished():
                if self.phase in {"proposed", "working"}:
                    self.phase = "over"
            case _:
                ignored(event, not_planned())

    def settle(self) -> None:
        """No run goes on with the plan any more (a session's history, told again, whose log lost how a run
        ended): a plan proposed or being carried out is over."""
        if self.phase in {"proposed", "working"}:
            self.phase = "over"

    def clear(self) -> None:
        """No plan (a fresh session)."""
        self._set([], "none")

    def _done_before(self, steps: list[str]) -> list[bool | None]:
        """The checks of the steps a revision keeps as they were, from the first one up to the first it changes."""
        return kept_checks(self.steps, self.checks, steps)

    @property
    def done(self) -> int:
        """How many steps passed their check."""
        return sum(1 for check in self.checks if check is True)

    def _compare(self, before: list[str]) -> None:
        """Mark what changed from ``before`` (nothing when there was no plan before)."""
        if not before:
            return
        matcher = difflib.SequenceMatcher(a=before, b=self.steps, autojunk=False)
        for tag, old_from, old_to, new_from, new_to in matcher.get_opcodes():
            if tag == "equal":
                continue
            for i in range(new_from, new_to):
                self.changes[i] = "changed" if tag == "replace" else "added"
            if tag == "delete" or (tag == "replace" and old_to - old_from > new_to - new_from):
                self.removed += before[old_from + (new_to - new_from) if tag == "replace" else old_from : old_to]

    def _set(self, steps: list[str], phase: str) -> None:
        self.steps = list(steps)
        self.checks = [None] * len(steps)
        self.failures = {}
        self.phase = phase
        self.why_replanned = ""
        self.changes = [""] * len(steps)
        self.removed = []
