"""Provides ``AgentLoop``: the one async core that every loop strategy drives.

``AgentLoop.run(task)`` is an async generator of step events; every event also
goes to the bus, when there is one, as it happens. Inside, a strategy (ReAct
by default, see ``chimera.core.loops``) drives the core through the narrow
``Core`` protocol: :meth:`user_turn` adds the person's message, :meth:`step`
does one turn (a model request with staged recovery, its tool calls, the
reminders and guards after them) and returns a ``StepResult``; :meth:`query`
is the bare model request. The conversation is a ``Context`` value that
survives between runs, so a second ``run`` is a follow-up in the same context.
A front end steers, answers questions and interrupts through the same object.
Steering (``loops.steering``) is read at the start of the next turn; words that
come as the last answer streams get one more turn of the same run, and words no
turn read when the run ends are handed back (``steering_returned``).

This module holds the run, the turn and what joins the conversation; the
parts it delegates to live beside the strategies: ``loops.model_turn`` (a
request streamed, its deltas published, its usage counted), ``loops.tool_turn``
(a message's tool calls, the pins around them, the reminders and the stuck
guard after them), ``loops.compactor`` (compaction), ``loops.prompts`` (the
system prompt).

Recovery (``loops.recovery``): failures worth retrying are retried with
backoff, each attempt announced by a ``retry`` event, the partial output of the
failed attempt discarded. A response cut by ``max_tokens`` is continued. A
400 fails at once.

Words no answer followed: when a run ends because the server refused the
request (an HTTP 4xx other than a rate limit), the model declined it, or the
person interrupted it before an answer, the words it added after its last
answer (its task, when nothing answered it; steering, a loop note) leave the
context, so the next request never carries them; the session keeps them,
marked (``left_out``), and ``run_finished`` says so (see ``loops.base.left_out_why``).

Secrets (the provider's credentials) are masked in everything that leaves the
core: every event as it is emitted (streamed text too, even a secret cut across
two deltas), every message before it joins the context or the session, and
the system prompt.

Guards: the turn limit, token and cost budgets, a wall-time limit, and stuck
detection (the same call with the same output again and again). An interrupt
stops the stream and the tools; open tool calls get a "cancelled" result so
the conversation stays valid, and the run still ends with ``run_finished``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TypeVar

from chimera.core.bus import EventBus
from chimera.core.context import Context
from chimera.core.env import Environment
from chimera.core.errors import SessionError
from chimera.core.events import (
    BranchCreated,
    BranchSummarized,
    CheckpointCreated,
    CompactionDone,
    MessageCompleted,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SteeringDelivered,
    SteeringReturned,
    StepEvent,
    ToolCallStarted,
    TurnStarted,
)
from chimera.core.gitsafe import GitStop
from chimera.core.loops.base import (
    LoopStrategy,
    Outcome,
    Pins,
    PlanAnswer,
    Recorder,
    RunInProgress,
    Steering,
    StepResult,
    Stop,
    ended_by,
    left_out_why,
)
from chimera.core.loops.batches import results_message, sendable
from chimera.core.loops.branch_notes import carried_message, summarize_branch
from chimera.core.loops.compaction import Compaction
from chimera.core.loops.compactor import Compactor
from chimera.core.loops.guards import StuckDetector, over_budget
from chimera.core.loops.model_turn import ModelTurn, with_room
from chimera.core.loops.prompts import workspace_prompt
from chimera.core.loops.questions import PlanQuestions
from chimera.core.loops.steering import SteeringQueue
from chimera.core.loops.tool_turn import ToolTurn
from chimera.core.messages import (
    CONTINUE_PROMPT,
    Prompt,
    content_blocks,
    joined_text,
    reminder_block,
    steering_block,
)
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.base import Message, ModelDone, ModelRequest, Provider
from chimera.core.redact import Redactor
from chimera.core.strict_json import clean_json, strict_message
from chimera.core.tool_group import ToolGroup
from chimera.core.tools.executor import Executor, ToolCall, ToolOutcome
from chimera.core.wording import plural

__all__ = ["CONTINUE_PROMPT", "AgentLoop", "LoopStrategy", "Outcome", "Pins", "Recorder", "RunInProgress"]

_E = TypeVar("_E", bound=StepEvent)
log = logging.getLogger("chimera.loop")
_DECLINED = "the model declined the request"


@dataclasses.dataclass(slots=True)
class _Unanswered:
    """The words a run added since its last answer: their session ``nodes`` and their content ``blocks``, which end
    the context's last message."""

    nodes: list[str] = dataclasses.field(default_factory=list)
    blocks: list[dict[str, object]] = dataclasses.field(default_factory=list)


class AgentLoop:
    """The agent's core: a conversation, a provider, tools, and an event stream.

    Args:
        provider: the model.
        tools: the tools offered; ``think`` is dropped when the model thinks natively.
        env: the workspace the tools act on.
        strategy: how turns are driven (``ReAct()`` for the default); its ``config`` gives the limits, and the
            policy, bus, stuck detector and event handler where the arguments here give none.
        session_id: the session this run belongs to (a new id when None).
        messages: an earlier conversation to continue.
        bus: where every event is published as it happens.
        policy: the permission policy (everything allowed when None).
        can_ask: whether someone answers permission requests.
        recorder: the session that keeps every message (none when None).
        node_id: the session node the conversation stands at (for a resumed session).
        context: the conversation to continue, as a session rebuilt it (instead of ``messages``
            and ``node_id``): it knows the node each message starts at, which compaction needs.
        pins: where the workspace is snapshotted at user turns and around tool calls that
            can change files (no checkpoints when None).
    """

    def __init__(
        self,
        provider: Provider,
        tools: ToolGroup,
        env: Environment,
        *,
        strategy: LoopStrategy,
        session_id: str | None = None,
        messages: list[Message] | None = None,
        bus: EventBus | None = None,
        policy: PermissionPolicy | None = None,
        can_ask: bool = False,
        recorder: Recorder | None = None,
        node_id: str | None = None,
        context: Context | None = None,
        pins: Pins | None = None,
    ) -> None:
        self.strategy = strategy
        self.config = strategy.config
        self.env = env
        self.bus = bus if bus is not None else self.config.event_bus
        self.tools = tools.without("think") if provider.native_thinking else tools
        self.session_id = session_id or new_id()
        # A session saved before its values were cleaned may hold what strict JSON cannot carry.
        if context is None:
            context = Context.of(messages or [], node_id)
        self.context = Context([strict_message(m) for m in context.messages], context.node_id, list(context.starts))
        self.recorder = recorder
        self.pins = pins
        self.redactor = Redactor(getattr(provider, "secrets", ()))
        self._model = ModelTurn(provider, self.redactor, self.emit, self.config.retry)
        self.executor = Executor(
            self.tools,
            env.workdir,
            env.spill_dir,
            max_output=self.config.max_output,
            concurrency=self.config.concurrency,
            policy=policy if policy is not None else self.config.permissions,
            can_ask=can_ask,
            secrets=getattr(provider, "secrets", ()),
            temp_root=getattr(env, "temp_root", None),
        )
        self.system: str | None = None
        self.run_id = ""
        self.steps = 0
        detector = self.config.detector or StuckDetector(self.config.stuck_after)
        self._tool_turn = ToolTurn(self.executor, self.tools, self.emit, detector)
        self._compactor = Compactor(self.config.compaction or Compaction(), self._model, self.redactor)
        self._steering = SteeringQueue()  # the person's words for the running work, delivered at the next step
        self._task_queued: str | None = None  # the queue id of the follow-up this run's task delivers
        self._plans = PlanQuestions()  # proposed plans awaiting an answer
        self._cut: list[str] = []  # the text of answers cut by max_tokens, which the next one continues
        self._unanswered: _Unanswered | None = None  # this run's words since its last answer (None: answered)
        self._interrupt_pending = False
        self._stopping = False  # an interrupt came for this run: no more turns, not even for late words
        self._starting: GitStop | None = None  # the snapshot's git calls, while the run starts
        self._notes: list[str] = []  # what the first run_started tells the person
        self._seq = 0
        self._out: asyncio.Queue[StepEvent | None] | None = None
        self._work: asyncio.Task[Outcome] | None = None

    @property
    def messages(self) -> list[Message]:
        """The conversation as the model is sent it."""
        return self.context.messages

    @property
    def node_id(self) -> str | None:
        """The session node the conversation stands at."""
        return self.context.node_id

    @property
    def provider(self) -> Provider:
        """The model (a replay gives each recorded run its own)."""
        return self._model.provider

    @provider.setter
    def provider(self, provider: Provider) -> None:
        self._model.provider = provider

    @property
    def cost(self) -> float:
        """What the run's model requests cost so far, in dollars."""
        return self._model.cost

    @property
    def tokens(self) -> int:
        """The run's input and output tokens so far."""
        return self._model.tokens

    @property
    def window(self) -> int:
        """The model's context window, in tokens."""
        return self._model.window

    # --- events -----------------------------------------------------------------------

    def emit(self, event: _E) -> _E:
        """Stamp ``event`` with this run's ids, sequence number and time, mask secrets in it; publish it."""
        self._seq += 1
        stamped = dataclasses.replace(
            self.redactor.mask_fields(event),
            run_id=self.run_id,
            session_id=self.session_id,
            node_id=self.node_id,
            seq=self._seq,
            ts=time.time(),
        )
        if self.bus is not None:
            self.bus.publish(stamped)
        if self.config.handler is not None:
            try:
                self.config.handler(stamped)
            except Exception:  # the handler's own fault: said in the log, the run goes on
                log.exception("the loop's handler failed on a %s event", stamped.type)
        if self._out is not None:
            self._out.put_nowait(stamped)
        return stamped

    @property
    def running(self) -> bool:
        return self._out is not None

    async def run(self, task: Prompt, *, queued: str | None = None) -> AsyncGenerator[StepEvent, None]:
        """Work on ``task``; yield every step event, ending with ``run_finished``.

        Close the iterator (``contextlib.aclosing``) to stop early: the run is then
        interrupted and still finishes properly (its last events go to the bus).
        ``queued``: the queue id of the follow-up ``task`` is (its message takes it off the queue).
        """
        if self._out is not None:
            raise RunInProgress("a run of this loop is already going: interrupt it or wait for it to finish")
        self._task_queued = queued
        task = clean_json(task)  # e.g. bytes that are not UTF-8 on the command line (a replay passes blocks)
        self.run_id = new_id()
        self._seq = 0
        self.steps = 0
        self._model.new_run()
        self._tool_turn.new_run()
        self._interrupt_pending = self._stopping = False
        self._unanswered = _Unanswered()
        self._compactor.new_run()
        out: asyncio.Queue[StepEvent | None] = asyncio.Queue()
        self._out = out
        driver = asyncio.create_task(self._drive(task, out))
        driver.add_done_callback(lambda _: out.put_nowait(None))  # whatever happened, the reading ends
        try:
            while (event := await out.get()) is not None:
                yield event
            if driver.done() and not driver.cancelled() and (failure := driver.exception()) is not None:
                raise failure  # the run could not even start: say so, never hang
        finally:
            if not driver.done():
                # The reader left (cancelled, or closed the iterator): end the run properly.
                self.interrupt()
                await asyncio.wait({driver}, timeout=10)
                if not driver.done():
                    driver.cancel()
            self._out = None
            self._steering.closed = False  # between runs, words wait for the next (a resumed session's)
            self._compactor.instruction = ""  # the strategy's last note held for this run only

    def steer(self, text: str, queue_id: str | None = None) -> bool:
        """Queue the person's words for the run in progress: delivered once, as a user message, after
        every tool call of the current message has its result and before the next model request; words
        that come as its last answer streams get one more turn. ``queue_id``: where the session keeps
        them until then. False (nothing queued) once the run has decided it is over, or for blank words."""
        return self._steering.add(text, queue_id)

    @property
    def steerable(self) -> bool:
        """Whether words sent now reach the run going: it runs, and has not decided it is over."""
        return self._out is not None and not self._steering.closed

    def take_steering(self) -> list[Steering]:
        """The steering not delivered yet, taken out of the queue."""
        return self._steering.take()

    def give_back_steering(self) -> list[Steering]:
        """The steering no turn read, taken out of the queue and off the session's, each handed back to the
        person in a ``steering_returned`` event (an interrupt, a run that stops at a limit)."""
        taken = self._steering.take()
        for steering in taken:
            if self.recorder is not None and steering.queue_id is not None:
                self.recorder.unqueue(steering.queue_id)
            self.emit(SteeringReturned(text=steering.text))
        return taken

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer an open question by its request id; False when it is not open (answered, or its run stopped).

        A permission request takes ``allow``, ``always`` or ``deny`` (with ``plan``, the person's reason
        for the model); a proposed plan takes ``approve``, ``edit`` (with ``plan``, the edited Markdown),
        ``revise`` (with ``plan``, what to change: the model plans again) or ``cancel``.
        """
        if request_id in self._plans:
            return self._plans.answer(request_id, decision, plan)
        return self.executor.answer(request_id, decision, plan or "")

    @property
    def workdir(self) -> Path:
        """The workspace the tools act on."""
        return self.env.workdir

    def open_plan(self) -> str | None:
        """The request id of the plan waiting for an answer, if one is."""
        return self._plans.open()

    def stop_asking(self) -> None:
        """Nobody answers from here on: open questions get a headless run's answer (a permission denied,
        a plan cancelled), and later ones are refused."""
        self.executor.stop_asking()
        self._plans.cancel_all()

    @property
    def can_ask(self) -> bool:
        """Whether someone answers questions (a front end listening), or they are refused at once."""
        return self.executor.can_ask

    @contextlib.contextmanager
    def read_only(self) -> Iterator[None]:
        """While inside, only read-only tools are offered, and the executor refuses any other call."""
        self.executor.planning = True
        try:
            yield
        finally:
            self.executor.planning = False

    async def check(self, command: str) -> tuple[bool, str]:
        """Run the person's check command (``--verify``) in the workspace: whether it passed, and its output."""
        result = await self.executor.check(command)
        return not result.is_error, result.output

    async def ask_plan(self, steps: list[str]) -> PlanAnswer:
        """Publish ``steps`` as a proposed plan and wait for the person's answer (see :meth:`answer`)."""
        return await self._plans.ask(steps, self.emit)

    def interrupt(self) -> None:
        """Stop the current run: the stream ends, tools are killed, ``run_finished`` says ``interrupted``."""
        if self._out is not None:
            self._stopping = True  # even between the last answer and the end: no turn for late words
        if self._work is not None and not self._work.done():
            self._work.cancel()
        elif self._out is not None and self._work is None:
            self._interrupt_pending = True  # the run is still starting: cancel its work as soon as it exists
            if self._starting is not None:
                self._starting.stop()  # and do not wait for a git that hangs

    async def _drive(self, task: Prompt, out: asyncio.Queue[StepEvent | None]) -> None:
        if self.system is None:
            starting = self._starting = GitStop()
            if self._interrupt_pending:
                starting.stop()
            try:
                system, note = await asyncio.to_thread(
                    workspace_prompt, self.env.workdir, tools=self.tools.names, stop=starting, mask=self.redactor.mask
                )
            finally:
                self._starting = None
            if note is not None:
                self._notes.append(note)
            if not starting.stopped:  # cut short by an interrupt: the next run builds it again
                self.system = self.redactor.mask(system)
        notes, self._notes = self._notes, []
        self.emit(
            RunStarted(
                task=task,
                model=self.provider.model,
                loop=self.strategy.name,
                workdir=str(self.env.workdir),
                notes=notes,
            )
        )
        work = asyncio.create_task(self.strategy.drive(self, task))
        self._work = work
        if self._interrupt_pending:
            work.cancel()
        limit: asyncio.Timeout | None = None
        try:
            async with asyncio.timeout(self.config.time_limit) as limit:
                outcome = await work
                while self._read_late_words(outcome):  # words that came as the last answer streamed, or after
                    work = self._work = asyncio.create_task(self._late_turns())
                    outcome = await work
                self._steering.closed = True  # decided: over. Nothing awaits between the check and here
        except (Exception, asyncio.CancelledError) as err:  # never leave the reader of run() waiting for the end
            outcome = ended_by(err, self.config.time_limit if limit is not None and limit.expired() else None)
        finally:
            self._work = None
            self._steering.closed = True
        self.give_back_steering()  # words no turn read go back to the person, never to another task
        try:
            left_out, left_nodes = self._leave_out(outcome)
        except SessionError as err:  # the mark could not be kept: the words stay, as the session has them
            outcome, left_out, left_nodes = Outcome(False, "session", error=str(err)), "", []
        self.emit(
            RunFinished(
                success=outcome.success,
                reason=outcome.reason,
                steps=self.steps,
                cost=round(self.cost, 6),
                error=outcome.error,
                answer=outcome.answer,
                left_out=left_out,
                left_out_nodes=left_nodes,
            )
        )
        out.put_nowait(None)

    def _leave_out(self, outcome: Outcome) -> tuple[str, list[str]]:
        """When ``outcome`` leaves out the words no answer followed (``loops.base.left_out_why``): marked in the
        session, then taken off the context (the node it stands at stays, so the next message follows them in
        the tree). Why, and their nodes; nothing when they stay (or a compaction took them into its summary)."""
        unanswered, self._unanswered = self._unanswered, None
        why = left_out_why(outcome)
        if not why or unanswered is None or not self.context.ends_with(unanswered.blocks):
            return "", []
        if unanswered.nodes and self.recorder is not None:
            self.recorder.leave_out(unanswered.nodes, why)
        self.context.drop_end(len(unanswered.blocks))
        return why, unanswered.nodes

    def _read_late_words(self, outcome: Outcome) -> bool:
        """Whether the run, done with its work, takes one more turn for words the person sent meanwhile:
        only when it succeeded, was not interrupted, and has a turn left."""
        return outcome.success and bool(self._steering) and not self._stopping and self.steps < self.config.max_steps

    async def _late_turns(self) -> Outcome:
        """The turn that reads late words (it delivers them), and the turns its tool calls need, as ReAct."""
        while True:
            result = await self.step()
            if result.outcome is not None:
                return result.outcome

    # --- primitives for strategies ---------------------------------------------------

    async def user_turn(self, prompt: Prompt) -> None:
        """Add ``prompt`` as the person's message and pin the workspace to it.

        When the node the context stands at already has children, the message starts a branch.
        """
        if self.recorder is not None and self.recorder.children_of(self.node_id):
            self.emit(BranchCreated(from_node=self.node_id or ""))
        queued, self._task_queued = self._task_queued, None
        self._append("user", {"role": "user", "content": prompt}, sync=True, queued=queued)
        self._cut.clear()
        await self._pin()

    def note(self, text: str) -> None:
        """Add a message of the loop's own (a reflection, a plan's next step) before the next request.

        It is the person's side of the conversation, marked as the loop's (a reminder block), so
        the transcript, an export and a replay tell it from the person's words.
        """
        self._append("user", {"role": "user", "content": [reminder_block(text)]}, sync=True)
        self._compactor.instruction = text

    async def step(self, answer: Callable[[], Awaitable[ModelDone]] | None = None) -> StepResult:
        """One turn: the guards before it, a model request with staged recovery, its tool calls,
        the reminders and guards after them.

        ``answer`` gets the turn's answer and adopts it (:meth:`query` when None; TreeOfThought
        samples several and adopts one). Raises :class:`Stop` when a guard ends the run (the turn
        limit, a budget).
        """
        if self.steps >= self.config.max_steps:
            turns = plural(self.steps, "turn")
            error = f"stopped after {turns} (the limit): raise --max-turns to let it go on"
            raise Stop(Outcome(False, "max_turns", error=error))
        self.steps += 1
        if self._compactor.due(self.config.auto_compact_threshold):
            await self.compact(reason="threshold")
        self._deliver_steering()
        self.emit(TurnStarted(turn=self.steps))
        done = await (self.query() if answer is None else self._with_room(answer))
        if done.stop_reason == "refusal":
            said = joined_text(done.message).strip()
            return StepResult(done, outcome=Outcome(False, "refusal", answer=said, error=_DECLINED))
        calls = [ToolCall.from_block(b) for b in done.message["content"] if b.get("type") == "tool_use"]
        try:
            self._check_budgets()
        except Stop as over:
            if calls:  # the calls will not run: answer them so the conversation stays valid
                skipped = [self.executor.skipped(c, over.outcome.error) for c in calls]
                for outcome in skipped:  # and say so, as the session will when it is read back
                    self.emit(ToolCallStarted(call_id=outcome.call.id, name=outcome.call.name, args=outcome.call.args))
                    self.emit(outcome.finished_event())
                self._append("tool_result", results_message(skipped), sync=True)
            raise
        if done.stop_reason == "max_tokens" and not calls:
            return self._continue(done)
        if not calls:
            text = ("".join(self._cut) + joined_text(done.message)).strip()
            return StepResult(done, outcome=Outcome(True, "completed", answer=text))
        self._cut.clear()
        outcomes, stop = await self._run_tools(calls)
        return StepResult(done, calls, outcomes, outcome=stop)

    def _deliver_steering(self) -> None:
        """The queued words go in as one loop note each (the model is told the person sent them
        while it worked; a replay keeps them inside the run they steered)."""
        for steering in self.take_steering():
            message = {"role": "user", "content": [steering_block(steering.text)]}
            self._append("user", message, sync=True, queued=steering.queue_id)
            self.emit(SteeringDelivered(text=steering.text))

    def _continue(self, done: ModelDone) -> StepResult:
        """The answer was cut by the output limit: ask the model to go on (a bounded number of times)."""
        if len(self._cut) >= self.config.retry.max_continuations:
            error = "the answer kept hitting the output limit"
            return StepResult(done, outcome=Outcome(False, "max_tokens", error=error))
        self._cut.append(joined_text(done.message))
        self.emit(RetryScheduled(reason="max_tokens", attempt=len(self._cut), wait_s=0.0, discards_partial=False))
        self._append("user", {"role": "user", "content": CONTINUE_PROMPT})
        return StepResult(done, continued=True)

    async def _run_tools(self, calls: list[ToolCall]) -> tuple[list[ToolOutcome], Outcome | None]:
        """Run one message's calls (see ``loops.tool_turn``); their results become the next node. Also returns
        the outcome of a stuck run."""
        asked_from = self.node_id

        def keep(outcome: ToolOutcome) -> None:
            if self.recorder is not None and asked_from is not None:
                self.recorder.record_result(asked_from, outcome.block())

        def answer(results: Message) -> None:
            self._append("tool_result", results, sync=True)

        return await self._tool_turn.run(calls, keep=keep, answer=answer, pin=self._pin)

    async def _pin(self, wrote: dict[str, bool] | None = None, folders: Sequence[str] = ()) -> None:
        if self.pins is not None and self.node_id is not None:
            commit = await self.pins.pin(self.node_id, wrote, folders=folders)
            if commit is not None:
                self.emit(CheckpointCreated(snapshot=commit))

    def _check_budgets(self) -> None:
        over = over_budget(self.config.token_budget, self.config.cost_budget, tokens=self.tokens, cost=self.cost)
        if over is not None:
            raise Stop(Outcome(False, "budget", error=over))

    def _append(self, kind: str, message: Message, *, sync: bool = False, queued: str | None = None) -> None:
        """Add a message to the context and to the session; it becomes the leaf.

        In the context a user message that follows a user message is merged into it
        (the API wants turns to alternate); the session keeps them as two nodes.
        ``sync`` makes the session durable up to here (a turn boundary); ``queued`` names the
        person's queued words the message delivers. Whatever the message
        holds, the context and the session get it as strict JSON (``strict_json.clean_json``).
        """
        message = self.redactor.mask_value(clean_json(message))
        node_id = None
        if self.recorder is not None:  # first on disk: if saving fails, memory does not run ahead of it
            node_id = self.recorder.record(kind, message, parent=self.context.node_id, sync=sync, queued=queued)
        self.context.add(message, node_id)
        if kind != "user":  # an answer, or the results of its calls: what came before is answered
            self._unanswered = None
        elif self._unanswered is not None or self.running:  # words of a run (between runs: a carried summary)
            unanswered = self._unanswered = self._unanswered or _Unanswered()
            unanswered.blocks += content_blocks(message["content"])
            if node_id is not None:
                unanswered.nodes.append(node_id)

    async def query(self) -> ModelDone:
        """One model request over the current context, retried in stages; partial output is never kept.

        The answer joins the conversation (and the session) as the new leaf, unless it is a refusal.
        """
        done = await self._with_room(lambda: self.request(self.context, report=False))
        self.adopt(done)
        self._model.report(done)
        return done

    async def _with_room(self, ask: Callable[[], Awaitable[ModelDone]]) -> ModelDone:
        """``ask()``; when the API says the prompt is too long, compact the conversation and ask once more."""

        async def compact() -> bool:
            return await self.compact(reason="prompt_too_long") is not None

        return await with_room(ask, compact)

    async def request(self, context: Context, *, quiet: bool = False, report: bool = True) -> ModelDone:
        """One model request over ``context``, retried in stages; it joins no context (see :meth:`adopt`).

        Its tokens and cost count toward the run's budgets and, with ``report``, a ``usage`` event
        says so at once. ``quiet``: no text or thinking deltas (answers requested side by side).
        """
        await self.tools.renewed()  # an MCP server's changed tool list, listed again before the request
        offered = self.tools.only(lambda tool: tool.read_only) if self.executor.planning else self.tools
        request = ModelRequest(
            system=self.system or "",
            messages=context.messages,
            tools=offered.schemas(),
            max_tokens=self.config.max_tokens,
        )
        done = await self._model.ask(request, quiet=quiet)
        if report:
            self._model.report(done)
        return done

    def adopt(self, done: ModelDone, *, aside: Sequence[ModelDone] = ()) -> None:
        """``done`` answers this turn: it joins the conversation and the session as the new leaf (a
        refusal leaves the context as it was). ``aside``, other answers to the same context, are kept
        in the session as its siblings, so the tree shows what was not taken."""
        if self.recorder is not None:
            for other in aside:
                message = self.redactor.mask_value(sendable(other.message))
                self.recorder.record("assistant", message, parent=self.context.node_id)
        if done.stop_reason != "refusal":
            self._append("assistant", sendable(done.message))
            self._model.measure(done)
        self.emit(MessageCompleted(message=sendable(done.message), stop_reason=done.stop_reason))

    def remember(self, title: str, text: str) -> None:
        """Keep ``text`` verbatim through every compaction, under ``title`` (the plan, as it stands)."""
        self._compactor.remembered[title] = text

    async def compact(self, focus: str = "", *, reason: str = "manual") -> CompactionDone | None:
        """Summarize the older part of the conversation; the recent part stays as it is (see ``loops.compactor``).

        The summary joins the session as a ``compaction`` node after the leaf (nothing is deleted: a
        point before it still has the whole history). ``focus``: what the summary should attend to.
        Returns the ``compaction`` event, or None when there is nothing older to summarize, or the
        summary came out no shorter than what it would stand for (then nothing changes, and the
        threshold does not ask again this run).
        """
        fixed = len(self.system or "") + len(json.dumps(self.tools.schemas()))  # sent with every request
        compacted = await self._compactor.compact(
            self.context, focus, reason=reason, fixed=fixed, recorder=self.recorder
        )
        if compacted is None:
            return None
        self.context, event = compacted
        return self.emit(event)

    async def carry_branch(self, left: Sequence[Message], from_node: str) -> BranchSummarized:
        """Summarize ``left``, a branch the person left (its leaf ``from_node``), and carry the summary into the
        conversation as a note after the leaf (see ``loops.branch_notes``); the ``branch_summary`` event says so."""
        summary = await summarize_branch(self._model, left, self._compactor.policy)
        self._append("user", carried_message(summary), sync=True)
        return self.emit(BranchSummarized(summary=summary, from_node=from_node, messages=len(left)))


def new_id() -> str:
    """A short random id, sortable by creation time."""
    return f"{int(time.time() * 1000):x}{uuid.uuid4().hex[:8]}"
