"""Provides the step events the agent loop publishes, and their JSON form.

Every event is a frozen dataclass with a snake_case ``type`` and the common
fields ``run_id``, ``session_id``, ``node_id``, ``seq`` and ``ts``. Each one
round-trips through one JSON object: ``event_from_dict(event.to_dict())``
equals the event. Events are plain data: a question (a permission request, a
proposed plan) carries a ``request_id``, and the answer goes back through the
core's API, never through the event.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar, get_args

from chimera.core.terminal_text import inert_json

__all__ = [
    "EVENT_TYPES",
    "AssistantMessage",
    "BranchCreated",
    "BranchSummarized",
    "CandidateChosen",
    "CandidateProposed",
    "CheckpointCreated",
    "CompactionDone",
    "ControlRejected",
    "Event",
    "MessageCompleted",
    "PermissionDecided",
    "PermissionRequested",
    "PlanApproved",
    "PlanCancelled",
    "PlanEdited",
    "PlanProposed",
    "PlanStepChecked",
    "PlanSuggested",
    "Reflected",
    "ReminderInjected",
    "Replanned",
    "RetryScheduled",
    "RunFinished",
    "RunStarted",
    "SteeringDelivered",
    "SteeringReturned",
    "StepEvent",
    "Switched",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallFinished",
    "ToolCallStarted",
    "ToolOutputDelta",
    "TurnStarted",
    "UsageReported",
    "event_from_dict",
    "event_from_json",
    "ignored",
]

AssistantMessage = dict[str, Any]
"""An assistant message in the Messages API shape: ``{"role": "assistant", "content": [...]}``."""

_REGISTRY: dict[str, type[StepEvent]] = {}
_E = TypeVar("_E", bound="type[StepEvent]")


@dataclass(frozen=True, slots=True, kw_only=True)
class StepEvent:
    """One observable step of a run. Subclasses set ``type``."""

    type: ClassVar[str] = "step"
    run_id: str = ""
    session_id: str = ""
    node_id: str | None = None
    seq: int = 0
    ts: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON-ready form: ``type`` first, then every field."""
        out: dict[str, Any] = {"type": self.type}
        for f in dataclasses.fields(self):
            out[f.name] = getattr(self, f.name)
        return out

    def to_json(self) -> str:
        """Return the event as one line of JSON, with nothing in it that could steer a terminal raw."""
        return inert_json(json.dumps(self.to_dict(), ensure_ascii=False, separators=(",", ":")))


def register(cls: _E) -> _E:
    """Make an event class known to :func:`event_from_dict` under its ``type``."""
    if cls.type in _REGISTRY:
        raise ValueError(f"event type {cls.type!r} registered twice")
    _REGISTRY[cls.type] = cls
    return cls


def event_from_dict(data: dict[str, Any]) -> StepEvent:
    """Rebuild an event from its JSON form; unknown keys are ignored, unknown types rejected."""
    kind = data.get("type")
    cls = _REGISTRY.get(str(kind))
    if cls is None:
        raise ValueError(f"unknown event type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    return cls(**{k: v for k, v in data.items() if k in names})


def event_from_json(line: str) -> StepEvent:
    """Rebuild an event from one line of JSON."""
    return event_from_dict(json.loads(line))


# --- run and turn ------------------------------------------------------------


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class RunStarted(StepEvent):
    type: ClassVar[str] = "run_started"
    task: str | list[dict[str, Any]]  # the person's words; blocks when the prompt held more than text
    model: str
    loop: str
    workdir: str = ""
    notes: list[str] = field(default_factory=list)  # one line each a person should see (a missing git snapshot)


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStarted(StepEvent):
    type: ClassVar[str] = "turn_started"
    turn: int


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class RunFinished(StepEvent):
    """How a run ended. ``left_out`` says why the run's words that no answer followed (its task, when the model
    never answered; steering or a loop note sent after its last answer) are left out of the conversation:
    ``refused`` (the server refused the request: an HTTP 4xx other than a rate limit), ``declined`` (the model
    declined it) or ``interrupted`` (stopped before an answer); empty when the conversation keeps everything the
    run said. ``left_out_nodes`` are the session nodes of those words, kept in the tree and marked (none when
    nothing was recorded: interrupted before the task joined the conversation)."""

    type: ClassVar[str] = "run_finished"
    success: bool
    reason: str
    steps: int
    cost: float
    error: str = ""
    answer: str = ""
    left_out: str = ""
    left_out_nodes: list[str] = field(default_factory=list)


# --- model output --------------------------------------------------------------


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(StepEvent):
    type: ClassVar[str] = "text_delta"
    text: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class ThinkingDelta(StepEvent):
    type: ClassVar[str] = "thinking_delta"
    text: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class MessageCompleted(StepEvent):
    """The whole assistant message, exactly as it goes back to the model."""

    type: ClassVar[str] = "message_completed"
    message: AssistantMessage
    stop_reason: str = ""


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class UsageReported(StepEvent):
    """What one model response used. ``context_tokens`` is the conversation's size as the API last
    reported it, against the model's ``context_window`` (past its threshold, the loop compacts)."""

    type: ClassVar[str] = "usage"
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0
    total_cost: float = 0.0
    context_tokens: int = 0
    context_window: int = 0


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class RetryScheduled(StepEvent):
    """The model is asked again: after a failure worth retrying, or to continue a cut answer.

    When ``discards_partial`` is true (a failed attempt) the output streamed since
    the last ``message_completed`` is void; when false (``max_tokens``) the cut
    answer stands and the next message continues it.
    """

    type: ClassVar[str] = "retry"
    reason: str
    attempt: int
    wait_s: float
    detail: str = ""
    discards_partial: bool = True


# --- tools and permissions ---------------------------------------------------------


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStarted(StepEvent):
    type: ClassVar[str] = "tool_call_started"
    call_id: str
    name: str
    args: dict[str, Any]


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutputDelta(StepEvent):
    """New output of a running call (``bash``), published a few times a second while it runs.

    ``text`` is what the call printed since its last delta, with secrets masked as in its
    result (never part of one: an end that could begin a secret waits for the next delta).
    ``skipped`` characters before ``text`` were left out: more came at once than one delta
    carries (16 KB). A live view, not a record: the output of the last moments may come only
    in ``tool_call_finished``, whose ``output`` is what counts; session logs leave deltas out.
    """

    type: ClassVar[str] = "tool_output_delta"
    call_id: str
    text: str
    skipped: int = 0


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallFinished(StepEvent):
    """A tool call's result, with ``output`` exactly as the model saw it, and how the call ended (``status``:
    ``ok``, ``failed``, ``refused``, ``declined``, ``cancelled``, ``skipped``; empty in a log from before
    calls carried one), so no reader has to read the output to learn it."""

    type: ClassVar[str] = "tool_call_finished"
    call_id: str
    name: str
    args: dict[str, Any]
    is_error: bool
    duration_ms: float
    output: str
    data: dict[str, Any] = field(default_factory=dict)
    status: str = ""
    # ``confined``: its processes ran in the sandbox; ``refused``: and the sandbox refused one of them something
    # (what: ``data["sandbox_refused"]``); empty: nothing ran confined (not a command, or the sandbox is off).
    sandbox: str = ""


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequested(StepEvent):
    """A call waits for the person's answer. ``preview``: what it would do, for a tool that can say (a ``write``
    or ``edit``: a unified diff against the file as it is when asked, bounded; see ``tools.change_preview``);
    its lines are as they are, for a front end to show escaped (``difflines.diff_lines``)."""

    type: ClassVar[str] = "permission_requested"
    request_id: str  # answered with ``answer(request_id, decision)``
    call_id: str
    name: str
    args: dict[str, Any]
    reason: str = ""  # why it is asked when that is not plain (a command that hides what it runs, .git)
    preview: str = ""
    outside_sandbox: bool = False  # the sandbox refused the command: may it run again, unconfined (once)?


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionDecided(StepEvent):
    type: ClassVar[str] = "permission_decided"
    call_id: str
    decision: str  # allow, always, deny; or cancelled when the run stopped before an answer
    reason: str = ""
    request_id: str = ""  # the request it answers, when the person was asked


# --- context ---------------------------------------------------------------------


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class ReminderInjected(StepEvent):
    type: ClassVar[str] = "reminder_injected"
    text: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringDelivered(StepEvent):
    type: ClassVar[str] = "steering_delivered"
    text: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class SteeringReturned(StepEvent):
    """The person's words for a run that no turn of it read (it was interrupted, or stopped at a limit):
    handed back, never kept for another task. The workbench puts them back in the input."""

    type: ClassVar[str] = "steering_returned"
    text: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class Reflected(StepEvent):
    type: ClassVar[str] = "reflection"
    text: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateProposed(StepEvent):
    """TreeOfThought: one of the answers sampled for this turn (``index`` from 0)."""

    type: ClassVar[str] = "candidate"
    index: int
    message: AssistantMessage
    stop_reason: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class CandidateChosen(StepEvent):
    """TreeOfThought: the candidate taken, the evaluator's score of each (None: not scored), and why."""

    type: ClassVar[str] = "candidate_chosen"
    index: int
    scores: list[int | None]
    reason: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionDone(StepEvent):
    """The older part of the conversation was summarized: ``reason`` is ``threshold`` (the context
    passed its share of the window), ``prompt_too_long`` (the API said so) or ``manual``.
    ``tokens_before`` is what the API last reported; ``tokens_after`` an estimate in proportion
    to the size left. ``kept``: messages kept as they were after the summary."""

    type: ClassVar[str] = "compaction"
    summary: str
    tokens_before: int = 0
    tokens_after: int = 0
    reason: str = "manual"
    kept: int = 0


# --- plans -------------------------------------------------------------------------


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanProposed(StepEvent):
    type: ClassVar[str] = "plan_proposed"
    steps: list[str]
    request_id: str = ""


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class ControlRejected(StepEvent):
    """A control line that could not be applied (``chimera run --control -``): why, and the line."""

    type: ClassVar[str] = "error"
    message: str
    line: str = ""


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanSuggested(StepEvent):
    """ReAct was given a task that looks like a change across many files: the plan loop may serve it better."""

    type: ClassVar[str] = "plan_suggested"
    reason: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanApproved(StepEvent):
    type: ClassVar[str] = "plan_approved"
    steps: list[str]


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanEdited(StepEvent):
    type: ClassVar[str] = "plan_edited"
    steps: list[str]


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanCancelled(StepEvent):
    type: ClassVar[str] = "plan_cancelled"
    reason: str = ""


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class PlanStepChecked(StepEvent):
    type: ClassVar[str] = "plan_step_checked"
    index: int  # from 0
    step: str = ""
    passed: bool = True
    by: str = ""  # the --verify command, or "model" for the model's own check
    detail: str = ""  # what the check said (the end of its output)
    attempt: int = 1


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class Replanned(StepEvent):
    type: ClassVar[str] = "replanned"
    steps: list[str]
    why: str = ""


# --- the session tree ----------------------------------------------------------------


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointCreated(StepEvent):
    type: ClassVar[str] = "checkpoint"
    label: str = ""
    snapshot: str = ""


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class BranchCreated(StepEvent):
    type: ClassVar[str] = "branch"
    from_node: str


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class Switched(StepEvent):
    type: ClassVar[str] = "switched"
    to_node: str
    changed_paths: list[str] = field(default_factory=list)


@register
@dataclass(frozen=True, slots=True, kw_only=True)
class BranchSummarized(StepEvent):
    """The branch the person left (from ``from_node``, its leaf, back to where it meets the path they came to)
    was summarized by the model; the summary is carried into the new path as a note (``node_id``).
    ``messages``: how many of the branch's messages it stands for."""

    type: ClassVar[str] = "branch_summary"
    summary: str
    from_node: str = ""
    messages: int = 0


# --- the closed set -------------------------------------------------------------


Event = (
    RunStarted
    | TurnStarted
    | RunFinished
    | TextDelta
    | ThinkingDelta
    | MessageCompleted
    | UsageReported
    | RetryScheduled
    | ToolCallStarted
    | ToolOutputDelta
    | ToolCallFinished
    | PermissionRequested
    | PermissionDecided
    | ReminderInjected
    | SteeringDelivered
    | SteeringReturned
    | Reflected
    | CandidateProposed
    | CandidateChosen
    | CompactionDone
    | PlanProposed
    | ControlRejected
    | PlanSuggested
    | PlanApproved
    | PlanEdited
    | PlanCancelled
    | PlanStepChecked
    | Replanned
    | CheckpointCreated
    | BranchCreated
    | Switched
    | BranchSummarized
)
"""Every kind of event there is. A reader that matches on events ends its ``match`` in :func:`ignored`,
naming the kinds it does not show, so a new kind cannot pass it unseen."""

EVENT_TYPES: tuple[type[StepEvent], ...] = tuple(get_args(Event))


def ignored(event: StepEvent, kinds: frozenset[type[StepEvent]]) -> None:
    """The last case of a reader's ``match``: ``event`` must be of a kind the reader names as ignored
    (``kinds``); TypeError otherwise, so a kind added later cannot pass a reader unseen (a test feeds every
    kind to every reader)."""
    if type(event) not in kinds:
        raise TypeError(f"a {event.type} event is neither handled here nor named as ignored")
