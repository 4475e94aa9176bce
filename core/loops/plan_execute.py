"""Provides ``PlanAndExecute``: plan with read-only tools, have the plan approved, then work through it.

1. **Plan.** The model may look around, but only read-only tools are offered and
   the executor refuses anything else, whatever the model asks. It answers with
   a Markdown checklist, parsed into steps and published as ``plan_proposed``.
2. **Decide.** The person approves, edits (the edited text becomes the plan),
   sends it back with what to change (``revise``: the model plans again, and
   the new plan is asked afresh) or cancels, through ``answer(request_id, …)``. With ``approve`` (headless
   ``--approve-plan``) the plan is approved as proposed; with nobody to ask and
   no ``approve``, the run stops and says which flag would let it go on. Either
   way ``plan_proposed`` carries the steps first (with no ``request_id``: nothing
   waits for an answer), so every reader sees them.
3. **Execute.** "Now execute the plan you just created, step by step": each step
   is a bounded inner loop with the plan in context, then a check (the
   ``verify`` command when set, else the model's own check) before
   ``plan_step_checked``. A step that fails its check is retried up to
   ``step_retries`` times, then the run stops with the reason (a circuit
   breaker per step). Before each step, the files the remaining steps name are
   compared with how the plan last saw them: one that went missing or changed
   underneath falsifies the plan, and the remaining steps are revised
   (``replanned``) instead of pushed through. What the agent's own ``write`` and
   ``edit`` change is expected; after a step that ran commands, whose effects
   cannot be told from anyone else's, every named file is taken as it is
   (how a file is watched, at a bounded cost: :mod:`fingerprints`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chimera.core.events import PlanApproved, PlanCancelled, PlanEdited, PlanProposed, PlanStepChecked, Replanned
from chimera.core.loops.base import Core, Outcome
from chimera.core.loops.fingerprints import falsified, fingerprint, fingerprints
from chimera.core.loops.plan_notes import (
    EXECUTE_PROMPT,
    PLANNING_PROMPT,
    check_note,
    edited_note,
    replan_note,
    retry_note,
    revise_note,
    step_note,
)
from chimera.core.loops.plans import Plan, check_passed, parse_checklist
from chimera.core.loops.strategy import Strategy
from chimera.core.messages import Prompt

__all__ = ["EXECUTE_PROMPT", "PLANNING_PROMPT", "PlanAndExecute"]

_CHECK_TURNS = 3  # turns the model's own check may take to look
_WRITERS = frozenset({"write", "edit"})
_READERS = frozenset({"read", "glob", "grep", "think"})


@dataclass(slots=True)
class _Work:
    """What the agent did during a step: the paths its write and edit changed, whether it ran a command."""

    wrote: set[str] = field(default_factory=set)
    ran_commands: bool = False


@dataclass(slots=True)
class PlanAndExecute(Strategy):
    """Plan with read-only tools, have the plan approved, execute it step by step with a check after each.

    Args:
        config: the limits and hooks of a run (``max_steps`` bounds every turn, planning included).
        max_steps: the turn limit, when given (else ``config.max_steps``).
        approve: approve the plan as proposed, without asking (headless ``--approve-plan``).
        verify: a command run in the workspace after each step; it passes when it exits 0.
        step_turns: turns one step may take.
        step_retries: times a step that fails its check is tried again before the run stops.
    """

    approve: bool = False
    verify: str | None = None
    step_turns: int = 10
    step_retries: int = 2
    name: str = "plan"

    def __post_init__(self) -> None:
        if self.step_turns < 1 or self.step_retries < 0:
            raise ValueError("step_turns must be at least 1 and step_retries at least 0")
        Strategy.__post_init__(self)

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        await core.user_turn(task)
        core.note(PLANNING_PROMPT)
        planned = await self._propose(core)
        if isinstance(planned, Outcome):
            return planned
        decided = await self._decide(core, planned)
        if isinstance(decided, Outcome):
            return decided
        return await self._execute(core, list(decided.steps))

    async def _propose(self, core: Core) -> Plan | Outcome:
        return await self._checklist(core, "planning", "the model answered without a checklist to follow")

    async def _checklist(self, core: Core, what: str, missing: str) -> Plan | Outcome:
        """The model's next answer, with only read-only tools, read as a checklist."""
        with core.read_only():
            answered = await _answer(core, self.step_turns, what)
        if not answered.success:
            return answered
        plan = parse_checklist(answered.answer)
        return plan if plan is not None else Outcome(False, "no_plan", answered.answer, missing)

    async def _decide(self, core: Core, plan: Plan) -> Plan | Outcome:
        steps = list(plan.steps)
        if self.approve or not core.can_ask:  # nobody is asked, and every reader still sees the steps
            core.emit(PlanProposed(steps=steps))
        if self.approve:
            core.emit(PlanApproved(steps=steps))
            return plan
        if not core.can_ask:
            why = "the plan needs approval and nobody can answer in a headless run: pass --approve-plan"
            core.emit(PlanCancelled(reason=why))
            return Outcome(False, "plan_cancelled", error=why)
        answer = await core.ask_plan(steps)
        while answer.decision == "revise":  # the person says what to change: the model plans again, asked afresh
            core.note(revise_note(answer.plan.strip()))
            revised = await self._checklist(core, "revising the plan", "the model answered without a revised checklist")
            if isinstance(revised, Outcome):
                return revised
            plan, steps = revised, list(revised.steps)
            answer = await core.ask_plan(steps)
        if answer.decision == "cancel":
            core.emit(PlanCancelled(reason="cancelled by the person"))
            return Outcome(False, "plan_cancelled", error="the person cancelled the plan")
        if answer.decision == "edit":
            edited = parse_checklist(answer.plan) or Plan((answer.plan.strip(),), answer.plan)
            core.emit(PlanEdited(steps=list(edited.steps)))
            core.note(edited_note(edited))
            return edited
        core.emit(PlanApproved(steps=steps))
        return plan

    async def _execute(self, core: Core, steps: list[str]) -> Outcome:
        seen = fingerprints(core.workdir, steps)
        last = Outcome(True, "completed")
        index = 0
        while index < len(steps):
            why = falsified(core.workdir, steps[index:], seen)
            if why is not None:
                revised = await self._replan(core, steps, index, why)
                if isinstance(revised, Outcome):
                    return revised
                steps = steps[:index] + revised
                core.emit(Replanned(steps=steps, why=why))
                seen = fingerprints(core.workdir, steps)
                continue
            work = _Work()
            last = await self._step(core, steps, index, work)
            if not last.success:
                return last
            if work.ran_commands:
                seen = fingerprints(core.workdir, steps)
            else:
                seen.update({path: fingerprint(core.workdir, path) for path in work.wrote if path in seen})
            index += 1
        return Outcome(True, "completed", answer=last.answer)

    async def _step(self, core: Core, steps: list[str], index: int, work: _Work) -> Outcome:
        number, step = index + 1, steps[index]
        core.remember("The plan, steps done so far checked", Plan(tuple(steps), "").checklist(done=index))
        core.note(step_note(steps, index))
        for attempt in range(1, self.step_retries + 2):
            done = await _answer(core, self.step_turns, f"step {number}", work)
            if not done.success:
                return done
            passed, detail, by = await self._check(core, number, step)
            core.emit(PlanStepChecked(index=index, step=step, passed=passed, by=by, detail=detail, attempt=attempt))
            if passed:
                return done
            core.note(retry_note(number, detail or "its check failed"))
        why = f"step {number} ({step}) failed its check {self.step_retries + 1} times"
        return Outcome(False, "plan_step_failed", error=f"{why}: {_last_line(detail)}")

    async def _check(self, core: Core, number: int, step: str) -> tuple[bool, str, str]:
        if self.verify is not None:
            passed, output = await core.check(self.verify)
            return passed, output[-2000:], self.verify
        core.note(check_note(number, step))
        with core.read_only():
            verdict = await _answer(core, _CHECK_TURNS, f"the check of step {number}")
        said = verdict.answer.strip()
        return verdict.success and check_passed(said), said[-2000:] or verdict.error, "model"

    async def _replan(self, core: Core, steps: list[str], index: int, why: str) -> list[str] | Outcome:
        core.note(replan_note(why, index, len(steps)))
        revised = await self._checklist(core, "replanning", "the model revised the plan without a checklist")
        return revised if isinstance(revised, Outcome) else list(revised.steps)


async def _answer(core: Core, turns: int, what: str, work: _Work | None = None) -> Outcome:
    """Steps until the model answers without a tool call (its answer), at most ``turns`` of them."""
    for _ in range(turns):
        result = await core.step()
        for outcome in result.outcomes:
            path = outcome.call.args.get("path")
            if work is not None and outcome.call.name in _WRITERS and isinstance(path, str):
                work.wrote.add(path)
            elif work is not None and not outcome.result.is_error and outcome.call.name not in _READERS:
                work.ran_commands = True
        if result.outcome is not None:
            return result.outcome
    return Outcome(False, "step_turns", error=f"{what} took more than {turns} turns")


def _last_line(text: str) -> str:
    return text.strip().splitlines()[-1] if text.strip() else "no output"
