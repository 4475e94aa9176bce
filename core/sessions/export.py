"""Provides ``export_markdown``: a session's active path as a Markdown document.

The person's messages (and what they said while it worked; words left out of
the model's context say so), the model's answers, the loop's notes,
compactions, and each tool call with its result (long results folded into
``<details>``), in the order they happened, as the
workbench shows them: thinking folded into ``<details>``, an edit's diff (from
the session's event log) after its result. Each node is read as
``sessions.reading`` reads it for every reader. What the session holds
is untrusted: every character that could steer a terminal (ESC, C1, bidi
overrides; see ``terminal_safe``) is written as a visible escape, so the
document is safe to print, page or ``cat``.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import re
from dataclasses import dataclass
from typing import Any

from chimera.core.difflines import diff_lines
from chimera.core.events import (
    PlanCancelled,
    PlanEdited,
    PlanProposed,
    PlanStepChecked,
    Replanned,
    StepEvent,
)
from chimera.core.loops.plan_notes import PlanNote
from chimera.core.loops.plans import kept_checks, only_the_list
from chimera.core.messages import content_blocks
from chimera.core.sessions.history import PlanTeller, read_log
from chimera.core.sessions.reading import (
    Answer,
    Carried,
    Continuation,
    Damaged,
    Note,
    Reader,
    Reading,
    Results,
    Steer,
    Summary,
    Task,
    left_out_of,
)
from chimera.core.sessions.store import SessionStore
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import describe_left_out

__all__ = ["export_markdown"]

_FOLD_AFTER = 12  # result lines shown before the rest is folded
_BACKTICKS = re.compile(r"`+")
_PUNCTUATION = re.compile(r"[!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]")  # CommonMark's escapable characters


def export_markdown(store: SessionStore) -> str:
    """The active path of ``store`` as Markdown, with nothing in it that could steer a terminal."""
    created = dt.datetime.fromtimestamp(float(store.meta.get("created", 0))).strftime("%Y-%m-%d %H:%M")
    out = [
        f"# {store.title}",
        "",
        f"- session: {code_span(store.id)}",
        f"- workspace: {code_span(str(store.workdir))}",
        f"- model: {code_span(str(store.meta.get('model', '?')))}",
        f"- started: {created}",
        "",
    ]
    logged = read_log(store)
    diffs = {key: event["data"]["diff"] for key, event in logged.calls.items() if _has_diff(event)}
    teller = PlanTeller(logged)
    path = [(reading, teller.told(reading)) for reading in Reader(store.tree).path()]
    plans = _plans(path)
    for reading, planned in path:
        out += _told(reading, diffs, planned, plans)
    return terminal_safe("\n".join(out).rstrip()) + "\n"


@dataclass(slots=True)
class _Plan:
    """A plan as the path leaves it: its steps, each one's last check (True passed, False failed, None not yet)."""

    steps: list[str]
    checks: list[bool | None]
    title: str


Told = list[tuple[Reading, list[StepEvent]]]  # each node of the path, with the plan's events it tells
Where = tuple[str, int]  # a plan's event: the node that tells it, and its place among the node's


def _plans(path: Told) -> dict[Where, _Plan]:
    """Each plan the path proposes, edits or revises, by where it is told, with the checks that follow it."""
    plans: dict[Where, _Plan] = {}
    plan: _Plan | None = None
    for reading, planned in path:
        for at, event in enumerate(planned):
            match event:
                case PlanProposed(steps=steps) | PlanEdited(steps=steps) | Replanned(steps=steps):
                    revised = plan is not None and isinstance(event, Replanned)
                    kept = kept_checks(plan.steps, plan.checks, steps) if plan is not None and revised else []
                    checks = kept + [None] * (len(steps) - len(kept))
                    plan = plans[(reading.node.id, at)] = _Plan(list(steps), checks, _title(event))
                case PlanStepChecked(index=index, passed=passed) if plan is not None and 0 <= index < len(plan.steps):
                    plan.checks[index] = passed
                case _:
                    pass
    return plans


def _title(event: StepEvent) -> str:
    match event:
        case PlanEdited():
            return "The plan, as the person edited it:"
        case Replanned(why=why):
            return f"The plan, revised ({plain(why)}):" if why else "The plan, revised:"
        case _:
            return "The plan:"


def _plan_lines(plan: _Plan) -> list[str]:
    """A plan as the workbench shows it: each step with its mark (☑ passed, ☒ failed, ☐ not checked)."""
    marks = {True: "☑", False: "☒", None: "☐"}
    items = [
        f"- {marks[check]} {' '.join(step.splitlines())}" for step, check in zip(plan.steps, plan.checks, strict=True)
    ]
    return [f"**{plan.title}**", "", *items, ""]


def _has_diff(event: dict[str, Any]) -> bool:
    data = event.get("data")
    return isinstance(data, dict) and isinstance(data.get("diff"), str) and bool(data["diff"])


def _told(
    reading: Reading, diffs: dict[tuple[str, str], str], planned: list[StepEvent], plans: dict[Where, _Plan]
) -> list[str]:
    """The Markdown lines for one node, as ``sessions.reading`` reads it, then the plan it proposes or a
    cancellation; words left out of the model's context say so after them."""
    lines = _lines(reading, diffs, planned)
    for at, event in enumerate(planned):
        if (plan := plans.get((reading.node.id, at))) is not None:
            heading = ["## Chimera", ""] if isinstance(reading, Answer) and not lines else []  # the model's plan
            lines += [*heading, *_plan_lines(plan)]
        elif isinstance(event, PlanCancelled):
            lines += [f"*({plain(f'plan cancelled: {event.reason}' if event.reason else 'plan cancelled')})*", ""]
    why = left_out_of(reading)
    return [*lines, f"*({plain(describe_left_out(why))})*", ""] if why and lines else lines


def _lines(reading: Reading, diffs: dict[tuple[str, str], str], planned: list[StepEvent]) -> list[str]:
    match reading:
        case Note(plan_note=PlanNote() as note):
            return ["> *The loop:* " + _quoted(note.line), ""]  # its checklist is the plan's, shown with its marks
        case Task(text=text):
            return ["## You", "", text, ""] if text else []
        case Steer(texts=texts):
            return [line for text in texts for line in ("## You, while it worked", "", text, "")]
        case Note(texts=texts):
            return [line for text in texts for line in ("> *The loop:* " + _quoted(text), "")]
        case Continuation():
            return []
        case Summary(summary=summary):
            return ["## Summary of earlier turns", "", summary, ""]
        case Carried(summary=summary):
            return ["## Summary of a branch left behind", "", summary, ""]
        case Damaged(why=why):
            return [f"*({why})*", ""]  # one damaged message: said where it was, the rest kept
        case Answer():
            return _answer(reading, _shown_by_plan(reading, planned))
        case Results(results=results, notes=notes):
            lines = []
            for result in results:
                lines += _result(result.call.name, result.text, result.is_error)
                diff = diffs.get(result.call.key)
                if diff is not None and not result.is_error:
                    body = diff_lines(diff)
                    fence = fence_for(body)
                    lines += [f"{fence}diff", *body, fence, ""]
            return lines + [line for text in notes for line in ("> *The loop:* " + _quoted(text), "")]


def _shown_by_plan(answer: Answer, planned: list[StepEvent]) -> bool:
    """Whether the plan shows what the answer's words say, as the workbench has it: words that are only the
    plan's list, or the model's ``DONE`` for a step (the plan ticks it; a failed check's words stay)."""
    for event in planned:
        match event:
            case PlanProposed(steps=steps) | Replanned(steps=steps) if only_the_list(answer.text, steps):
                return True
            case PlanStepChecked(passed=True, by="model", detail=detail):
                return bool(detail.strip()) and answer.text.strip() == detail.strip()
            case _:
                pass
    return False


def _answer(answer: Answer, words_shown: bool = False) -> list[str]:
    """The model's message under its heading; ``words_shown``: its words are left to the plan that shows them
    (nothing at all when the message has nothing else)."""
    if words_shown and not answer.thinking and not answer.calls:
        return []
    lines = ["## Chimera", ""]
    calls = iter(answer.calls)  # in the order the message makes them, between its words
    for block in content_blocks(answer.message.get("content")):
        if block.get("type") == "text" and str(block.get("text", "")).strip():
            lines += [] if words_shown else [str(block["text"]), ""]
        elif block.get("type") == "thinking" and str(block.get("thinking", "")).strip():
            thinking = html.escape(str(block["thinking"]), quote=False)  # it cannot close the details it is in
            lines += ["<details><summary>thinking</summary>", "", thinking, "", "</details>", ""]
        elif block.get("type") == "tool_use" and (call := next(calls, None)) is not None:
            lines += [f"**{plain(call.name)}** {code_span(_argument(call.args))}", ""]
    return lines


def _quoted(text: str) -> str:
    """``text`` inside a Markdown quote: every line of it quoted."""
    return "\n> ".join(text.splitlines() or [""])


def _result(name: str, text: str, is_error: bool) -> list[str]:
    body = text.rstrip("\n").splitlines() or ["(no output)"]
    title = f"{name} {'failed' if is_error else 'output'}"
    fence = fence_for(body)
    if len(body) <= _FOLD_AFTER:
        return [f"{plain(title)}:", "", fence, *body, fence, ""]
    summary = html.escape(f"{title} ({len(body)} lines)")
    return [f"<details><summary>{summary}</summary>", "", fence, *body, fence, "", "</details>", ""]


def _argument(args: dict[str, Any]) -> str:
    for key in ("command", "path", "pattern"):
        if key in args:
            return " ".join(str(args[key]).splitlines())
    return json.dumps(args, ensure_ascii=False)[:120]


def fence_for(lines: list[str]) -> str:
    """A code fence no line of ``lines`` can close: longer than any run of backticks in them (at least 3)."""
    longest = max((len(run) for line in lines for run in _BACKTICKS.findall(line)), default=0)
    return "`" * max(3, longest + 1)


def code_span(text: str) -> str:
    """``text`` as inline code, whatever backticks it holds: what is inside is shown, never read as Markdown."""
    text = " ".join(text.splitlines())
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    return f"{ticks} {text} {ticks}" if text.strip() else f"{ticks}{text or ' '}{ticks}"


def plain(text: str) -> str:
    """``text`` on one line with every character Markdown or HTML could act on escaped: shown as it is."""
    return _PUNCTUATION.sub(r"\\\g<0>", " ".join(text.splitlines()))
