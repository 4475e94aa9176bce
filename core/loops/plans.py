"""Provides the plan a PlanAndExecute run works from: a checklist parsed from the model's Markdown.

The planning answer is a Markdown checklist (``- [ ] step``); numbered or plain
bullets are read too, since models drift. A plan names files; the files a step
names are what the run watches to notice that the plan no longer holds. A step's
check by the model is read here too (:func:`check_passed`), whether an answer is
nothing but a plan's list (:func:`only_the_list`), which every reader shows as the
plan instead, and what a re-plan keeps of the checks (:func:`kept_checks`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Plan", "check_passed", "kept_checks", "looks_complex", "named_paths", "only_the_list", "parse_checklist"]

_ITEM = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+(?:\[[ xX]\]\s+)?(?P<text>\S.*?)\s*$")
_CHECKBOX = re.compile(r"^\s{0,3}(?:[-*+]|\d{1,3}[.)])\s+\[[ xX]\]\s+\S")
# A path a step names: in backticks, or a bare word with a folder or an extension (src/app.py, README.md).
_QUOTED = re.compile(r"`([^`\s]+)`")
_BARE = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)+[\w.-]+|[\w-]+\.[A-Za-z][\w]{0,7})(?![\w/])")
_NOT_PATHS = frozenset({"e.g", "i.e", "etc", "vs"})


# What a task that changes many things says of itself; each pattern's name is the reason given.
_COMPLEX = (
    ("a rename across files", re.compile(r"\brename\b.*\b(across|everywhere|throughout|all|every)\b", re.I | re.S)),
    ("a migration", re.compile(r"\bmigrat(e|ion|ing)\b", re.I)),
    ("a refactor", re.compile(r"\brefactor(ing|s)?\b", re.I)),
    ("a port or upgrade", re.compile(r"^\W*(please\s+)?(port|upgrade|convert)\b.*\b(to|from)\b", re.I | re.S)),
    (
        "a change to many files",
        re.compile(
            r"\b(many|all|every|each)\s+(the\s+)?(files?|modules?|call ?sites?|usages?)\b"
            r"|\bacross the (code ?base|repo)",
            re.I,
        ),
    ),
)


def looks_complex(task: str) -> str | None:
    """What makes ``task`` look like a change across many files (a rename across, a migration, a
    refactor...), or None when it does not."""
    return next((reason for reason, pattern in _COMPLEX if pattern.search(task)), None)


@dataclass(frozen=True, slots=True)
class Plan:
    """The steps of a plan, in order, and the Markdown they were read from."""

    steps: tuple[str, ...]
    text: str

    def checklist(self, done: int = 0) -> str:
        """The plan as a Markdown checklist, the first ``done`` steps ticked."""
        return "\n".join(f"- [{'x' if i < done else ' '}] {step}" for i, step in enumerate(self.steps))


def parse_checklist(text: str) -> Plan | None:
    """The plan in ``text``: its checklist items when it has any, else its list items; None without a list."""
    lines = text.splitlines()
    boxed = [line for line in lines if _CHECKBOX.match(line)]
    items = [m["text"] for line in (boxed or lines) if (m := _ITEM.match(line))]
    steps = tuple(item.strip() for item in items if item.strip())
    return Plan(steps, text) if steps else None


def only_the_list(text: str, steps: Sequence[str]) -> bool:
    """Whether ``text`` is nothing but a list of the last steps of ``steps`` (all of them, or the ones a
    re-plan revised): the plan shows them, so the words need not show as well."""
    plan = parse_checklist(text)
    if plan is None or len(plan.steps) > len(steps):
        return False
    lines = [line for line in text.splitlines() if line.strip()]
    return len(lines) == len(plan.steps) and tuple(steps[len(steps) - len(plan.steps) :]) == plan.steps


def kept_checks(steps: Sequence[str], checks: Sequence[bool | None], revised: Sequence[str]) -> list[bool | None]:
    """The checks a revision (``revised``) of ``steps`` keeps: those of the steps it leaves as they were, from the
    first up to the first it changes or that had not passed (a re-plan keeps the steps done before it)."""
    kept: list[bool | None] = []
    for old, new, check in zip(steps, revised, checks, strict=False):
        if old != new or check is not True:
            break
        kept.append(check)
    return kept


def check_passed(answer: str) -> bool:
    """Whether the model's answer to a step's check says it is done (``DONE`` first, not ``NOT DONE: why``)."""
    said = answer.strip()
    head = said.splitlines()[0].strip("`*_ ").upper() if said else ""
    return head.startswith("DONE")


def named_paths(step: str) -> list[str]:
    """The file paths ``step`` names, in order, each once."""
    found: list[str] = []
    for match in [*_QUOTED.findall(step), *_BARE.findall(step)]:
        path = match.strip(".,;:()\"'")
        if path and path.lower() not in _NOT_PATHS and ("/" in path or "." in path) and path not in found:
            found.append(path)
    return found
