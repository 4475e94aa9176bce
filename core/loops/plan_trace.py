"""Provides ``PlanTrace``: what a plan run's messages, read in order, tell of its plan.

A live PlanAndExecute run publishes its plan as events (``plan_proposed``, ``plan_approved``, ``plan_edited``,
``replanned``, ``plan_step_checked``); a stored session holds the messages they came with. Read in order, the
loop's own notes (``plan_notes``) say what the answers after them are: the plan (or its revision), a step's
work, a step's verdict. So the same events come back from the messages alone. A trace is a value: each
message read gives the next trace and the events the live run published for it (:meth:`PlanTrace.answer`,
:meth:`PlanTrace.note`); a new task starts from :data:`NO_PLAN`.

A check by ``--verify`` leaves no message of its own: its failure is read from the note that says the step
is not done, its pass from the note that goes on (the next step, or a re-plan), so the last step's pass and a
plan cancelled are what only the session's event log keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from chimera.core.events import PlanApproved, PlanEdited, PlanProposed, PlanStepChecked, Replanned, StepEvent
from chimera.core.loops.plan_notes import PlanNote
from chimera.core.loops.plans import check_passed, parse_checklist

__all__ = ["NO_PLAN", "UNNAMED_CHECK", "PlanTrace"]

UNNAMED_CHECK = ""
"""``plan_step_checked``'s ``by`` for a check read back from the messages alone (a ``--verify`` command,
which they do not name)."""

Awaits = Literal["", "plan", "replan", "work", "worked", "check", "checked"]


@dataclass(frozen=True, slots=True)
class PlanTrace:
    """Where a plan run stands after a message.

    ``awaits`` what the model's next answer that calls no tool is: ``plan`` (the plan, or its revision),
    ``replan`` (the revised steps from step ``number``, because of ``why``), ``work`` (step ``number``'s
    work done), ``check`` (the verdict on step ``number``); ``worked`` and ``checked`` say the step's work,
    or its verdict, came; empty, nothing of the plan's. ``steps`` is the plan as it stands, ``step`` the one
    worked on, ``attempt`` the how-manyth time; ``decided`` is False while a plan proposed waits for the
    person.
    """

    awaits: Awaits = ""
    steps: tuple[str, ...] = ()
    number: int = 0
    step: str = ""
    attempt: int = 1
    decided: bool = True
    why: str = ""

    def answer(self, text: str, calls: bool) -> tuple[PlanTrace, tuple[StepEvent, ...]]:
        """The trace after the model's answer ``text`` (``calls``: it calls tools, so the model goes on), and the
        plan's events it tells."""
        if calls or self.awaits in {"", "worked", "checked"}:
            return self, ()
        if self.awaits == "work":
            return replace(self, awaits="worked"), ()
        if self.awaits == "check":
            said = text.strip()
            passed = check_passed(said)
            index, detail = self.number - 1, said[-2000:]
            checked = PlanStepChecked(
                index=index, step=self.step, passed=passed, by="model", detail=detail, attempt=self.attempt
            )
            return replace(self, awaits="checked"), (checked,)
        plan = parse_checklist(text)
        if plan is None:  # the run ended there: no plan to follow
            return NO_PLAN, ()
        if self.awaits == "plan":
            return PlanTrace(steps=plan.steps, decided=False), (PlanProposed(steps=list(plan.steps)),)
        steps = (*self.steps[: self.number - 1], *plan.steps)
        return PlanTrace(steps=steps), (Replanned(steps=list(steps), why=self.why),)

    def note(self, note: PlanNote) -> tuple[PlanTrace, tuple[StepEvent, ...]]:
        """The trace after the loop's ``note``, and the plan's events it tells (a decision, a ``--verify`` check)."""
        match note.kind:
            case "planning":
                return PlanTrace(awaits="plan", decided=False), ()
            case "revise":
                return replace(self, awaits="plan", decided=False), ()
            case "edited":
                return PlanTrace(steps=note.steps), (PlanEdited(steps=list(note.steps)),)
            case "step":
                told = (*self._decided(), *self._passed())
                steps = note.steps or self.steps
                return PlanTrace("work", steps, note.number, note.step), told
            case "check":
                return replace(self, awaits="check", number=note.number, step=note.step), ()
            case "retry":  # told already when the model's verdict came; else a command's, or a check with no verdict
                told = self._failed(note.why) if self.awaits in {"worked", "check"} else ()
                return replace(self, awaits="work", attempt=self.attempt + 1), told
            case "replan":
                told = (*self._decided(), *self._passed())
                return replace(self, awaits="replan", number=note.number, why=note.why, decided=True), told

    def _decided(self) -> tuple[StepEvent, ...]:
        """The plan proposed was approved as it stood: the work starts on it."""
        return () if self.decided else (PlanApproved(steps=list(self.steps)),)

    def _passed(self) -> tuple[StepEvent, ...]:
        """The step whose work came with no verdict of the model's passed its check (the run went on)."""
        if self.awaits != "worked":
            return ()
        return (PlanStepChecked(index=self.number - 1, step=self.step, by=UNNAMED_CHECK, attempt=self.attempt),)

    def _failed(self, why: str) -> tuple[StepEvent, ...]:
        """The step failed its check, saying ``why``: the model's, when it was asked and gave no verdict (it took
        too many turns), else a command's."""
        by = "model" if self.awaits == "check" else UNNAMED_CHECK
        failed = PlanStepChecked(
            index=self.number - 1, step=self.step, passed=False, by=by, detail=why, attempt=self.attempt
        )
        return (failed,)


NO_PLAN = PlanTrace()
"""No plan: a run that has none, or a new task."""
