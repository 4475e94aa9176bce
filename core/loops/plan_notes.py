"""Provides the notes PlanAndExecute writes into the conversation, and :func:`read_plan_note`, their reading back.

The plan loop speaks to the model in notes of its own: make a plan, revise it as the person asked, follow the
plan the person edited, do step N, check step N, step N is not done, the plan no longer holds. Each note is
written by a function here and read back by :func:`read_plan_note` from the same words, so a stored session
tells what every note did for its plan from its records alone (``sessions.reading``), whether or not its
event log survives. A note reads back as a :class:`PlanNote`; :attr:`PlanNote.line` says it in one line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from chimera.core.loops.plans import Plan, parse_checklist

__all__ = [
    "EXECUTE_PROMPT",
    "PLANNING_PROMPT",
    "PlanNote",
    "check_note",
    "edited_note",
    "read_plan_note",
    "replan_note",
    "retry_note",
    "revise_note",
    "step_note",
]

PLANNING_PROMPT = (
    "Before changing anything, make a plan. Look around with the read-only tools if you need to, then answer "
    "with the plan as a Markdown checklist, one line per step (`- [ ] step`), naming the files each step "
    "touches. Change nothing yet: only read-only tools run until the plan is approved."
)
EXECUTE_PROMPT = "Now execute the plan you just created, step by step."
_STEP = "{lead}Step {number} of {count}: {step}\n\nThe plan:\n{checklist}\n\nDo this step only, then say it is done."
_CHECK = (
    "Check step {number} ({step}) with the read-only tools: is it done? Answer `DONE`, or `NOT DONE: <why>`, "
    "on the first line."
)
_RETRY = "Step {number} is not done: {why}\nFix it, then say it is done."
_REPLAN = (
    "The plan no longer holds: {why}. Revise the remaining steps ({remaining}) as a Markdown checklist, one "
    "line per step. Change nothing yet."
)
_REVISE = (
    "The person wants the plan changed before anything runs: {feedback}\nAnswer with the whole revised plan as a "
    "Markdown checklist, one line per step. Change nothing yet."
)
_EDITED = "The person edited the plan. Follow this one instead:\n{checklist}"

# The same words, read back (a step may hold any character, a newline included).
_STEP_READ = re.compile(
    rf"(?P<lead>{re.escape(EXECUTE_PROMPT)}\n\n)?Step (?P<number>\d{{1,6}}) of (?P<count>\d{{1,6}}): (?P<step>.*?)"
    r"\n\nThe plan:\n(?P<checklist>.*)\n\nDo this step only, then say it is done\.",
    re.S,
)
_CHECK_READ = re.compile(
    r"Check step (?P<number>\d{1,6}) \((?P<step>.*)\) with the read-only tools: is it done\? Answer `DONE`, or "
    r"`NOT DONE: <why>`, on the first line\.",
    re.S,
)
_RETRY_READ = re.compile(r"Step (?P<number>\d{1,6}) is not done: (?P<why>.*)\nFix it, then say it is done\.", re.S)
_REPLAN_READ = re.compile(
    r"The plan no longer holds: (?P<why>.*)\. Revise the remaining steps \((?:steps (?P<first>\d{1,6}) to "
    r"\d{1,6}|step (?P<only>\d{1,6}))\) as a Markdown checklist, one line per step\. Change nothing yet\.",
    re.S,
)
_REVISE_READ = re.compile(
    r"The person wants the plan changed before anything runs: (?P<feedback>.*)\nAnswer with the whole revised plan "
    r"as a Markdown checklist, one line per step\. Change nothing yet\.",
    re.S,
)
_EDITED_LEAD = "The person edited the plan. Follow this one instead:\n"
_ITEM = re.compile(r"- \[(?P<mark>[ x])\] ", re.S)  # an item of a checklist Plan.checklist wrote
_ITEM_START = re.compile(r"\n(?=- \[[ x]\] )")


@dataclass(frozen=True, slots=True)
class PlanNote:
    """What a note of the plan loop asks. ``kind``:

    - ``planning``: make a plan (the next answer that calls no tool is the plan);
    - ``revise``: the person sent the plan back, ``why`` says what to change (the next such answer is the new plan);
    - ``edited``: follow ``steps``, the plan as the person edited it;
    - ``step``: do step ``number`` (from 1), ``step``, of ``steps`` (the plan as it stands, the first ``done``
      ticked); ``first`` when it is the first step of the work (the plan was just decided);
    - ``check``: check step ``number``, ``step`` (the next such answer is the verdict);
    - ``retry``: step ``number`` failed its check, ``why`` says what it said;
    - ``replan``: the plan no longer holds (``why``): revise the steps from ``number`` on.
    """

    kind: Literal["planning", "revise", "edited", "step", "check", "retry", "replan"]
    number: int = 0
    step: str = ""
    steps: tuple[str, ...] = ()
    done: int = 0
    first: bool = False
    why: str = ""

    @property
    def line(self) -> str:
        """The note in one short line, as a person reads it (its checklist left to the plan that shows it)."""
        match self.kind:
            case "planning":
                return "make a plan first, with the read-only tools"
            case "revise":
                return f"revise the plan: {self.why}"
            case "edited":
                return "follow the plan as the person edited it"
            case "step":
                return f"step {self.number} of {len(self.steps)}: {self.step}"
            case "check":
                return f"check step {self.number}: {self.step}"
            case "retry":
                return f"step {self.number} is not done: {self.why}"
            case "replan":
                return f"the plan no longer holds ({self.why}): revise it from step {self.number}"


def step_note(steps: list[str], index: int) -> str:
    """The note that starts step ``index`` (from 0) of ``steps``, the plan shown with the steps before it ticked."""
    checklist = Plan(tuple(steps), "").checklist(done=index)
    lead = f"{EXECUTE_PROMPT}\n\n" if index == 0 else ""
    return _STEP.format(lead=lead, number=index + 1, count=len(steps), step=steps[index], checklist=checklist)


def check_note(number: int, step: str) -> str:
    """The note that asks the model to check step ``number`` (from 1)."""
    return _CHECK.format(number=number, step=step)


def retry_note(number: int, why: str) -> str:
    """The note that says step ``number`` failed its check, and why."""
    return _RETRY.format(number=number, why=why)


def replan_note(why: str, index: int, count: int) -> str:
    """The note that asks for the steps from ``index`` (from 0) of ``count`` to be revised, because of ``why``."""
    remaining = f"steps {index + 1} to {count}" if index + 1 < count else f"step {index + 1}"
    return _REPLAN.format(why=why, remaining=remaining)


def revise_note(feedback: str) -> str:
    """The note that sends the plan back with the person's ``feedback``."""
    return _REVISE.format(feedback=feedback)


def edited_note(plan: Plan) -> str:
    """The note that hands the model the plan as the person edited it."""
    return _EDITED.format(checklist=plan.checklist())


def read_plan_note(text: str) -> PlanNote | None:
    """What the plan loop's note ``text`` asks, or None when it is not one of its notes."""
    if text == PLANNING_PROMPT:
        return PlanNote("planning")
    if text.startswith(_EDITED_LEAD):
        steps, _ = _checklist_steps(text.removeprefix(_EDITED_LEAD))
        return PlanNote("edited", steps=steps)
    if (step := _STEP_READ.fullmatch(text)) is not None:
        steps, done = _checklist_steps(step["checklist"])
        return PlanNote("step", int(step["number"]), step["step"], steps, done, first=bool(step["lead"]))
    if (check := _CHECK_READ.fullmatch(text)) is not None:
        return PlanNote("check", int(check["number"]), check["step"])
    if (retry := _RETRY_READ.fullmatch(text)) is not None:
        return PlanNote("retry", int(retry["number"]), why=retry["why"])
    if (replan := _REPLAN_READ.fullmatch(text)) is not None:
        return PlanNote("replan", int(replan["first"] or replan["only"]), why=replan["why"])
    if (revise := _REVISE_READ.fullmatch(text)) is not None:
        return PlanNote("revise", why=revise["feedback"])
    return None


def _checklist_steps(checklist: str) -> tuple[tuple[str, ...], int]:
    """The steps of a checklist :meth:`Plan.checklist` wrote (a step may span lines), and how many are ticked."""
    items = [item for item in _ITEM_START.split(checklist) if _ITEM.match(item)]
    if not items:  # not a checklist Chimera wrote: read it as the model's would be
        plan = parse_checklist(checklist)
        return (plan.steps if plan is not None else ()), 0
    steps = tuple(_ITEM.sub("", item, count=1) for item in items)
    return steps, sum(1 for item in items if item.startswith("- [x]"))
