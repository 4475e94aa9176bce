"""Provides ``PlanEntries``: a plan run's checklist as ACP's ``plan`` update, each step with its status.

``plan_proposed`` sets the steps, all ``pending``; ``plan_approved`` (or an edit) starts the work, and the
first step not yet passed is ``in_progress``; ``plan_step_checked`` marks a step that passed ``completed``
(one that failed its check stays in progress: it is tried again); ``replanned`` replaces the steps and
keeps the checks of those done before it; ``plan_cancelled`` stops the work.
"""

from __future__ import annotations

from acp.helpers import plan_entry, update_plan
from acp.schema import AgentPlanUpdate, PlanEntryStatus

from chimera.core.events import PlanApproved, PlanCancelled, PlanEdited, PlanProposed, PlanStepChecked, Replanned
from chimera.core.loops.plans import kept_checks

__all__ = ["PlanEntries", "PlanEvent"]

PlanEvent = PlanProposed | PlanApproved | PlanEdited | Replanned | PlanStepChecked | PlanCancelled


class PlanEntries:
    """The latest plan of a session and how far its work has come."""

    def __init__(self) -> None:
        self.steps: list[str] = []
        self.checks: list[bool | None] = []
        self.working = False

    def apply(
        self, event: PlanProposed | PlanApproved | PlanEdited | Replanned | PlanStepChecked | PlanCancelled
    ) -> None:
        """Follow the plan through one of its events."""
        match event:
            case PlanProposed(steps=steps):
                self._set(steps)
                self.working = False
            case PlanEdited(steps=steps):
                self._set(steps)
                self.working = True
            case Replanned(steps=steps):
                kept = kept_checks(self.steps, self.checks, steps)
                self._set(steps)
                self.checks[: len(kept)] = kept
                self.working = True
            case PlanApproved():
                self.working = True
            case PlanStepChecked(index=index, passed=passed):
                if 0 <= index < len(self.checks):
                    self.checks[index] = passed
            case PlanCancelled():
                self.working = False

    def _set(self, steps: list[str]) -> None:
        self.steps = list(steps)
        self.checks = [None] * len(steps)

    def update(self) -> AgentPlanUpdate:
        """The whole plan as a ``plan`` update (ACP replaces the client's plan with each one)."""
        current = next((i for i, check in enumerate(self.checks) if check is not True), None) if self.working else None
        return update_plan(plan_entry(step, status=self._status(i, current)) for i, step in enumerate(self.steps))

    def _status(self, index: int, current: int | None) -> PlanEntryStatus:
        if self.checks[index] is True:
            return "completed"
        return "in_progress" if index == current else "pending"
