"""Provides the one reading of a stored session: what each node of its tree is, decided once.

A node's kind (``user``, ``assistant``, ``tool_result``, ``compaction``) says
who wrote its message; what the message *is* takes a closer look, and every
reader of a session asks the same question. :func:`read_node` answers it, for
the model's context, the workbench's history, replay, export, ``chimera tree``
and node summaries alike, so steering or a compaction can never show in one
and vanish from another:

- :class:`Task` the person's prompt (a run starts with it);
- :class:`Steer` the person's words sent while the loop worked;
- :class:`Note` a note of the loop's own (a reflection, a plan's next step);
- :class:`Continuation` the prompt that asks the model to go on after the output limit;
- :class:`Answer` the model's message, with its tool calls;
- :class:`Results` the tool calls' results (and the loop's notes sent with them);
- :class:`Summary` a compaction, which stands for what came before it;
- :class:`Carried` the summary of a branch the person left, carried into the path they came to;
- :class:`Damaged` a record that no longer decodes (the rest of the session still reads).

A plan run is read as it ran: the loop's notes (``loops.plan_notes``) say what the answers after them are,
so an answer that is the plan, a revision of it or a step's verdict, and a note that decides the plan or
tells a ``--verify`` check, carry the events the live run published for them (``plan``: ``plan_proposed``,
``plan_approved``, ``plan_edited``, ``replanned``, ``plan_step_checked``), read from the messages alone by
:class:`Reader`, which reads a node after the nodes of its run above it (``loops.plan_trace``).

Words of the person's side (a prompt, steering, a note, a continuation, a carried summary) may be
*left out* of the model's context (``left_out`` says why: ``refused``, ``declined``, ``interrupted``):
a run ended with no answer to them, and the session keeps them, marked. Every reader shows them as
such, and :func:`model_context` sends them no more.

Readings are values (nothing changes one once made) kept as plain slotted dataclasses, not frozen ones:
a long session makes them by the hundred thousand, and a frozen one costs twice as much to make.

A tool call is known by its place in the tree (the node of the message that made
it, :attr:`Call.key`), never by the provider's ``tool_use`` id alone: a local
server numbers ids from 1 at every start, so ids repeat within a session. A
result is matched to its call through its node's parent, the message that asked.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from chimera.core.context import Context
from chimera.core.errors import SessionError
from chimera.core.events import PlanEdited, PlanProposed, PlanStepChecked, Replanned, StepEvent
from chimera.core.loops.plan_notes import PlanNote, read_plan_note
from chimera.core.loops.plan_trace import NO_PLAN, PlanTrace
from chimera.core.messages import (
    REMINDER_OPEN,
    SUMMARY_PREFIX,
    carried_text,
    content_blocks,
    is_continue_prompt,
    is_reminder,
    steering_text,
)
from chimera.core.sessions.tree import Node, SessionTree
from chimera.core.terminal_text import flat

__all__ = [
    "Answer",
    "Call",
    "Carried",
    "Continuation",
    "Damaged",
    "Note",
    "Reader",
    "Reading",
    "Result",
    "Results",
    "Steer",
    "Summary",
    "Task",
    "left_out_of",
    "model_context",
    "read_node",
    "result_text",
    "summary",
]

_SUMMARY_WIDTH = 80
_REMINDER_CLOSE = "</system-reminder>"


@dataclass(slots=True)
class Call:
    """A tool call as the session holds it: made by the message at ``node``, ``id`` as the provider named it."""

    node: str
    id: str
    name: str
    args: dict[str, Any]

    @property
    def key(self) -> tuple[str, str]:
        """What names this call in the session, whatever ids the provider reused."""
        return (self.node, self.id)


@dataclass(slots=True)
class Result:
    """A call's result: ``text`` as the model saw it; ``call`` is the call it answers (found by place)."""

    call: Call
    text: str
    is_error: bool


@dataclass(slots=True)
class Task:
    """The person's prompt: ``text`` their words, ``content`` as it was sent (text, or blocks)."""

    node: Node
    text: str
    content: Any
    left_out: str = ""  # why it is left out of the model's context (empty: it is in it)
    part: ClassVar[str] = "prompt"


@dataclass(slots=True)
class Steer:
    """The person's words, sent while the loop worked (one message each)."""

    node: Node
    texts: tuple[str, ...]
    left_out: str = ""
    part: ClassVar[str] = "steering"


@dataclass(slots=True)
class Note:
    """A note of the loop's own, in the person's turn (a reflection, a plan's next step).

    ``plan_note`` is what a note of the plan loop asks; ``plan`` the plan's events it tells (a decision,
    a ``--verify`` check), as :class:`Reader` reads it in its run."""

    node: Node
    texts: tuple[str, ...]
    left_out: str = ""
    plan_note: PlanNote | None = None
    plan: tuple[StepEvent, ...] = ()
    part: ClassVar[str] = "note"


@dataclass(slots=True)
class Continuation:
    """The loop asking the model to go on after a response cut by the output limit."""

    node: Node
    left_out: str = ""
    part: ClassVar[str] = "continuation"


@dataclass(slots=True)
class Answer:
    """The model's message: its text, its thinking, the tool calls it makes; ``plan`` the plan's events it tells
    (it is the plan, a revision of it or a step's verdict), as :class:`Reader` reads it in its run."""

    node: Node
    message: dict[str, Any]
    text: str
    thinking: tuple[str, ...]
    calls: tuple[Call, ...]
    plan: tuple[StepEvent, ...] = ()
    part: ClassVar[str] = "answer"


@dataclass(slots=True)
class Results:
    """The results of the calls the parent message made, and the loop's notes sent after them."""

    node: Node
    results: tuple[Result, ...]
    notes: tuple[str, ...]
    part: ClassVar[str] = "results"


@dataclass(slots=True)
class Summary:
    """A compaction: the model's ``summary`` of what came before; ``text`` the whole message it sent."""

    node: Node
    summary: str
    text: str
    part: ClassVar[str] = "compaction"


@dataclass(slots=True)
class Carried:
    """The model's ``summary`` of a branch the person left, carried as a note into the path they came to."""

    node: Node
    summary: str
    left_out: str = ""
    part: ClassVar[str] = "branch_summary"


@dataclass(slots=True)
class Damaged:
    """A node whose record no longer decodes; ``why`` says so in a line."""

    node: Node
    why: str
    part: ClassVar[str] = "damaged"


Reading = Task | Steer | Note | Continuation | Answer | Results | Summary | Carried | Damaged


def read_node(node: Node, asked: tuple[Call, ...] = (), left_out: str = "") -> Reading:
    """What ``node`` is. ``asked``: the calls of its parent, for a results node (from :func:`read_node` of it);
    ``left_out``: why a user message is left out of the model's context (the tree's mark; empty: it is not)."""
    try:
        message = node.message
    except SessionError as err:
        return Damaged(node, str(err))
    blocks = content_blocks(message.get("content"))
    if node.kind == "assistant":
        return _answer(node, message, blocks)
    if node.kind == "compaction":
        said = [str(b.get("text", "")) for b in blocks if b.get("type") == "text"]
        summary = next((t.removeprefix(SUMMARY_PREFIX) for t in said if t.startswith(SUMMARY_PREFIX)), None)
        whole = "\n\n".join(said)
        return Summary(node, whole if summary is None else summary, whole)
    if node.kind == "tool_result":
        return _results(node, blocks, asked)
    if is_continue_prompt(message):
        return Continuation(node, left_out)
    words = [str(b.get("text", "")) for b in blocks if b.get("type") == "text" and not is_reminder(b)]
    if words or any(b.get("type") not in {"text", "tool_result"} for b in blocks):  # an image is the person's too
        return Task(node, "\n\n".join(words), message.get("content"), left_out)
    carried = [text for text in map(carried_text, blocks) if text is not None]
    if carried:
        return Carried(node, "\n\n".join(carried), left_out)
    steering = tuple(text for text in map(steering_text, blocks) if text is not None)
    if steering:
        return Steer(node, steering, left_out)
    texts = tuple(_reminder_text(b) for b in blocks if is_reminder(b))
    return Note(node, texts, left_out, read_plan_note(texts[0]) if len(texts) == 1 else None)


def left_out_of(reading: Reading) -> str:
    """Why the node ``reading`` reads is left out of the model's context; empty when it is in it."""
    return reading.left_out if isinstance(reading, Task | Steer | Note | Continuation | Carried) else ""


def _answer(node: Node, message: dict[str, Any], blocks: list[dict[str, Any]]) -> Answer:
    texts, thinking, calls = [], [], []
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text", "")))
        elif kind == "thinking":
            thinking.append(str(block.get("thinking", "")))
        elif kind == "tool_use":
            given = block.get("input")
            args = given if isinstance(given, dict) else {"__input__": given}
            calls.append(Call(node.id, str(block.get("id")), str(block.get("name")), args))
    return Answer(node, message, "".join(texts), tuple(thinking), tuple(calls))


def _results(node: Node, blocks: list[dict[str, Any]], asked: tuple[Call, ...]) -> Results:
    by_id: dict[str, Call] = {}
    for call in asked:
        by_id.setdefault(call.id, call)  # the API refuses a message that repeats an id: the first stands
    results, notes = [], []
    for block in blocks:
        if block.get("type") == "tool_result":
            call_id = str(block.get("tool_use_id"))
            call = by_id.get(call_id) or Call(node.parent_id or "", call_id, "tool", {})
            results.append(Result(call, result_text(block.get("content")), bool(block.get("is_error"))))
        elif is_reminder(block):
            notes.append(_reminder_text(block))
    return Results(node, tuple(results), tuple(notes))


def result_text(content: Any) -> str:
    """A result's content as text: a string as it is, blocks' text one a line."""
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content_blocks(content) if b.get("type") == "text")


def _reminder_text(block: dict[str, Any]) -> str:
    return str(block.get("text", "")).removeprefix(REMINDER_OPEN).removesuffix(_REMINDER_CLOSE).strip()


def _told_of_plan(event: StepEvent) -> str:
    """One of the plan's events in a line, as the plan shows it: its steps with their marks, or a step's mark."""
    match event:
        case PlanProposed(steps=steps):
            return "[plan] " + _marked(steps)
        case PlanEdited(steps=steps):
            return "[plan, as the person edited it] " + _marked(steps)
        case Replanned(steps=steps, why=why):
            return f"[plan revised: {why}] " + _marked(steps)
        case PlanStepChecked(index=index, step=step, passed=True):
            return f"☑ step {index + 1}: {step}"
        case PlanStepChecked(index=index, detail=detail):
            return f"☒ step {index + 1}: {detail or 'its check failed'}"
        case _:
            return ""  # an approval: the steps already show


def _marked(steps: list[str]) -> str:
    return " ".join(f"☐ {step}" for step in steps)


def summary(reading: Reading) -> str:
    """One line saying what the node holds, at most 80 characters."""
    match reading:  # the kinds most nodes are, first
        case Answer(text=text, calls=calls, plan=()):
            line = " ".join([text, *(f"[{c.name}]" for c in calls)])
        case Answer(plan=plan):
            line = " ".join(told for told in map(_told_of_plan, plan) if told)
        case Note(plan_note=PlanNote() as note, plan=plan):
            line = "[loop] " + " · ".join([*(told for told in map(_told_of_plan, plan) if told), note.line])
        case Results(results=results):
            line = " ".join("[error]" if r.is_error else "[result]" for r in results)
        case Task(text=text):
            line = text or "[attachment]"
        case Steer(texts=texts):
            line = "(while it worked) " + " / ".join(texts)
        case Note(texts=texts):
            line = "[loop] " + " / ".join(texts)
        case Continuation():
            line = "[continue after the output limit]"
        case Summary(summary=text):
            line = "[summary] " + text
        case Carried(summary=text):
            line = "[branch left] " + text
        case Damaged():
            line = "[damaged record]"
    if why := left_out_of(reading):
        line = f"[left out: {why}] {line}"
    head = line[: _SUMMARY_WIDTH * 4]  # only what can show: a long answer costs what is shown
    shown = flat(head)
    if len(shown) <= _SUMMARY_WIDTH and len(head) < len(line):  # mostly blank so far: look at all of it
        shown = flat(line)
    return shown if len(shown) <= _SUMMARY_WIDTH else shown[: _SUMMARY_WIDTH - 1] + "…"


class Reader:
    """Reads the nodes of one tree, each once: a reading is kept and given again when asked again.

    A node is read after the nodes above it in its run (up to the prompt that started it, or a node read
    already): a results node is matched to the calls of its parent, and a plan run's answers and notes are
    read for what they tell of its plan (``loops.plan_trace``)."""

    def __init__(self, tree: SessionTree) -> None:
        self.tree = tree
        self._read: dict[str, Reading] = {}
        self._traces: dict[str, PlanTrace] = {}  # where a plan stands after each node (none: NO_PLAN)

    def read(self, node_id: str) -> Reading:
        """What node ``node_id`` is."""
        reading = self._read.get(node_id)
        if reading is None:
            node = self.tree.nodes[node_id]
            parent = node.parent_id
            if parent is None or parent in self._read:  # most reads: a path read from its root
                return self._read_in_run(node, None)
            reading = self._read_up(node)
        return reading

    def _read_up(self, node: Node) -> Reading:
        """Read ``node`` after the nodes above it in its run not read yet (up to the prompt that starts it)."""
        nodes, read = self.tree.nodes, self._read
        unread: list[tuple[Node, Reading | None]] = []  # from node up, each with its reading when made on the way
        seen: set[str] = set()
        current: str | None = node.id
        while current is not None and current in nodes and current not in read and current not in seen:
            above = nodes[current]
            seen.add(current)
            first = read_node(above, (), self.tree.left_out.get(current, "")) if above.kind == "user" else None
            unread.append((above, first))
            if isinstance(first, Task):  # a run starts here: nothing above it tells of this run's plan
                break
            current = above.parent_id
        for above, first in reversed(unread):
            self._read_in_run(above, first)
        return read[node.id]

    def _read_in_run(self, node: Node, reading: Reading | None) -> Reading:
        """Read ``node`` (``reading``: as read without its run, when already made), its parent read."""
        parent = node.parent_id
        if reading is None:
            above = self._read.get(parent) if node.kind == "tool_result" and parent is not None else None
            asked = above.calls if isinstance(above, Answer) else ()
            reading = read_node(node, asked, self.tree.left_out.get(node.id, ""))
        trace = self._traces.get(parent, NO_PLAN) if self._traces and parent is not None else NO_PLAN
        if type(reading) is Note and reading.plan_note is not None:
            trace, reading.plan = trace.note(reading.plan_note)
        elif trace is not NO_PLAN:  # a plan run's: what its answers are
            if type(reading) is Task:
                trace = NO_PLAN
            elif type(reading) is Answer:
                trace, reading.plan = trace.answer(reading.text, bool(reading.calls))
        if trace is not NO_PLAN:
            self._traces[node.id] = trace
        self._read[node.id] = reading
        return reading

    def path(self, node_id: str | None = None) -> Iterator[Reading]:
        """The readings from the root to ``node_id`` (the leaf when None), in order."""
        for node in self.tree.path(node_id):
            yield self.read(node.id)

    def summary(self, node_id: str) -> str:
        return summary(self.read(node_id))


def model_context(tree: SessionTree, node_id: str | None = None) -> Context:
    """The model's context at ``node_id`` (the leaf when None): the path's messages, user turns merged.

    A compaction on the path stands for everything before it: its summary comes first, then
    the tail it kept (from the node in ``tree.kept``), then what followed it. A point before
    the compaction still has its whole history. A message left out (``tree.left_out``) is not
    sent. A damaged record on the path is a SessionError naming it: the model is never sent a
    conversation with a hole in it.
    """
    path = tree.path(node_id)
    seen: list[Node] = []
    left_out = tree.left_out
    for node in path:
        if node.id in left_out:
            continue
        if node.kind == "compaction":
            kept = tree.kept.get(node.id)
            starts = [index for index, earlier in enumerate(seen) if earlier.id == kept]
            seen = [node, *seen[starts[0] :]] if starts else [node]
        else:
            seen.append(node)
    return Context.along(((node.message, node.id) for node in seen), path[-1].id if path else None)
