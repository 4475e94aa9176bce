"""Provides the shapes the loop, its strategies and its collaborators agree on.

A strategy sees the loop only through :class:`Core`: add the person's turn,
take a :meth:`Core.step`, make a bare :meth:`Core.query`, emit an event. The
loop (``chimera.core.agent_loop.AgentLoop``) implements it; strategies import
this module, never the loop, so nothing imports in a circle.

``StepResult`` is what one step did; ``Outcome`` says how a drive ended
(``Stop`` carries one out of a guard, :func:`ended_by` makes one of any other
error that ends it); ``Recorder`` (the session store) and
``Pins`` (workspace checkpoints) are what the loop is given to keep things.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from chimera.core.context import Context
from chimera.core.errors import REFUSED_KINDS, ProviderError, ReplayDiverged, SessionError
from chimera.core.events import CompactionDone, StepEvent
from chimera.core.loop_config import LoopConfig
from chimera.core.messages import Prompt
from chimera.core.providers.base import Message, ModelDone
from chimera.core.tools.executor import ToolCall, ToolOutcome

__all__ = [
    "ENDED_LEAVING_OUT",
    "PLAN_DECISIONS",
    "Core",
    "LoopStrategy",
    "Outcome",
    "Pins",
    "PlanAnswer",
    "Recorder",
    "RunInProgress",
    "Steering",
    "StepResult",
    "Stop",
    "ended_by",
    "left_out_why",
]

PLAN_DECISIONS = ("approve", "edit", "revise", "cancel")

_E = TypeVar("_E", bound=StepEvent)


class RunInProgress(RuntimeError):
    """``run`` was called while another run of the same loop was going."""


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a drive (or one step of it) ended."""

    success: bool
    reason: str
    answer: str = ""
    error: str = ""


class Stop(Exception):
    """A guard ended the run; carries the outcome."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.error)
        self.outcome = outcome


def ended_by(err: Exception | asyncio.CancelledError, time_limit: float | None) -> Outcome:
    """How a drive that raised ``err`` ended. ``time_limit`` is given when the wall-time limit (that many
    seconds) is what struck; any other ``TimeoutError`` is a failure like another."""
    if isinstance(err, Stop):
        return err.outcome
    if isinstance(err, ProviderError):
        return Outcome(False, err.kind, error=str(err))
    if isinstance(err, ReplayDiverged):
        return Outcome(False, "diverged", error=str(err))
    if isinstance(err, SessionError):
        return Outcome(False, "session", error=str(err))
    if isinstance(err, TimeoutError) and time_limit is not None:
        error = f"stopped at the wall-time limit of {time_limit:g}s: raise --max-time to let it go on"
        return Outcome(False, "time_limit", error=error)
    if isinstance(err, asyncio.CancelledError):
        return Outcome(False, "interrupted", error="the run was interrupted")
    return Outcome(False, "error", error=f"the run failed: {type(err).__name__}: {err}")


ENDED_LEAVING_OUT = {"refused": "bad_request", "declined": "refusal", "interrupted": "interrupted"}
"""For each reason words are left out, a reason a run ends with that leaves them out (a recorded end played again)."""


def left_out_why(outcome: Outcome) -> str:
    """Why a run that ended with ``outcome`` leaves the words no answer followed out of the conversation
    (``refused``, ``declined``, ``interrupted``), or empty when they stay: a request the server refused (an HTTP
    4xx other than a rate limit) or the model declined fails the same way when sent again, and a run the
    person stopped before an answer is theirs to send again or not. Words a failing server or network never
    answered stay: sent again, they may well be answered."""
    if outcome.reason == "interrupted":
        return "interrupted"
    if outcome.reason == "refusal":
        return "declined"
    return "refused" if outcome.reason in REFUSED_KINDS else ""


@dataclass(frozen=True, slots=True)
class StepResult:
    """One step: the model's answer, the calls it made and how they ended.

    ``outcome`` is set when the step ends the work: a text-only answer (``completed``),
    a refusal, a response that kept hitting the output limit, or a stuck run. A step
    whose answer was cut by the output limit asked the model to go on (``continued``).
    """

    done: ModelDone
    calls: list[ToolCall] = field(default_factory=list)
    outcomes: list[ToolOutcome] = field(default_factory=list)
    outcome: Outcome | None = None
    continued: bool = False

    @property
    def message(self) -> Message:
        return self.done.message

    @property
    def stop_reason(self) -> str:
        return self.done.stop_reason


@dataclass(frozen=True, slots=True)
class Steering:
    """Words the person sent a run while it worked; ``queue_id`` names them in the session's queue."""

    text: str
    queue_id: str | None = None


@dataclass(frozen=True, slots=True)
class PlanAnswer:
    """The person's answer to a proposed plan: ``approve``, ``edit`` (``plan`` is the edited text), ``revise``
    (``plan`` says what to change) or ``cancel``."""

    decision: str
    plan: str = ""


class Core(Protocol):
    """What a strategy may use of the loop."""

    @property
    def workdir(self) -> Path:
        """The workspace the tools act on."""
        ...

    @property
    def can_ask(self) -> bool:
        """Whether someone answers questions; else a question is refused at once."""
        ...

    def read_only(self) -> AbstractContextManager[None]:
        """While inside, only read-only tools are offered and the executor refuses any other call."""
        ...

    async def ask_plan(self, steps: list[str]) -> PlanAnswer:
        """Publish a proposed plan and wait for the person's answer."""
        ...

    async def check(self, command: str) -> tuple[bool, str]:
        """Run the person's check command in the workspace: whether it passed, and its output."""
        ...

    @property
    def config(self) -> LoopConfig: ...

    @property
    def context(self) -> Context: ...

    async def user_turn(self, prompt: Prompt) -> None:
        """Add ``prompt`` as the person's message (a new branch when the node has children) and pin the files."""
        ...

    def note(self, text: str) -> None:
        """Add a message of the loop's own (a reflection, a plan's next step) before the next request."""
        ...

    def remember(self, title: str, text: str) -> None:
        """Keep ``text`` verbatim through every compaction, under ``title`` (the plan, as it stands)."""
        ...

    def steer(self, text: str, queue_id: str | None = None) -> bool:
        """Queue the person's words: delivered before the next model request (False: not taken)."""
        ...

    async def compact(self, focus: str = "", *, reason: str = "manual") -> CompactionDone | None:
        """Summarize the older part of the conversation now; None when nothing changed."""
        ...

    async def step(self, answer: Callable[[], Awaitable[ModelDone]] | None = None) -> StepResult:
        """One turn: a model request with staged recovery (or ``answer``, which gets and adopts the
        turn's answer), its tool calls, the reminders and guards after them."""
        ...

    async def query(self) -> ModelDone:
        """One model request over the context, retried in stages; the answer joins the context."""
        ...

    async def request(self, context: Context, *, quiet: bool = False, report: bool = True) -> ModelDone:
        """One model request over ``context``, counted in the run's usage; it joins no context."""
        ...

    def adopt(self, done: ModelDone, *, aside: Sequence[ModelDone] = ()) -> None:
        """Make ``done`` this turn's answer; ``aside`` are kept in the session as its siblings."""
        ...

    def emit(self, event: _E) -> _E:
        """Stamp ``event`` with the run's ids and publish it."""
        ...


class LoopStrategy(Protocol):
    """A way to drive the core: ReAct, plan-and-execute, reflexion, tree of thought."""

    name: str
    config: LoopConfig

    async def drive(self, core: Core, task: Prompt) -> Outcome:
        """Work on ``task`` through the core's primitives and say how it ended."""
        ...


class Recorder(Protocol):
    """Where messages are kept: the session store."""

    def record(
        self, kind: str, message: Message, *, parent: str | None, sync: bool = False, queued: str | None = None
    ) -> str:
        """Keep ``message`` (``user``, ``assistant`` or ``tool_result``) after ``parent`` as the new leaf; its id.

        ``queued``: the id of the person's queued words the message delivers (taken off the queue with it)."""
        ...

    def record_compaction(self, message: Message, *, parent: str | None, keep: str | None) -> str:
        """Keep a compaction's summary after ``parent``, the conversation from node ``keep`` on kept as it was."""
        ...

    def unqueue(self, queue_id: str) -> None:
        """Take the person's queued words ``queue_id`` off the queue: handed back, never delivered."""
        ...

    def record_result(self, parent_id: str, block: dict[str, Any]) -> None:
        """Keep one finished tool result of the calls ``parent_id`` made, before the batch ends."""
        ...

    def children_of(self, node_id: str | None) -> int:
        """How many nodes already follow ``node_id`` (more than none: a new message branches)."""
        ...

    def leave_out(self, node_ids: Sequence[str], why: str) -> None:
        """Keep the user messages ``node_ids`` but leave them out of the model's context from now on (``why``:
        ``refused``, ``declined`` or ``interrupted``: the run ended with no answer to them)."""
        ...


class Pins(Protocol):
    """Where the workspace is pinned to session nodes (checkpoints)."""

    async def pin(
        self, node_id: str, wrote: Mapping[str, bool] | None = None, *, folders: Sequence[str] = ()
    ) -> str | None:
        """Snapshot the workspace and pin it to ``node_id``; the snapshot id, or None.

        ``wrote``: after a batch, the paths Chimera's ``write``/``edit`` wrote, each True when
        ``write`` created it (the only files a switch may treat as the agent's creations);
        ``folders``: the folders ``write`` made (the only ones a switch may remove).
        """
        ...

    async def tidy(self) -> None:
        """Bound the disk the snapshots take (when the session closes)."""
        ...
