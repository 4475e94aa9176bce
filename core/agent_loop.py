"""Provides ``AgentLoop``: the one async core that every loop strategy drives.

``AgentLoop.run(task)`` is an async generator of step events; every event also
goes to the bus, when there is one, as it happens. Inside, a strategy (ReAct
by default) calls the core's primitives: :meth:`react` runs turns (query the
model, run the tools it asks for) until the model answers without a tool call;
:meth:`query` makes one model request with staged recovery. The conversation
survives between runs, so a second ``run`` is a follow-up in the same context.

Recovery, in stages: failures worth retrying (rate limits, overload, a
mid-stream ``error`` event, a stream cut before ``message_stop``, a stalled
stream, an unreachable server) are retried with backoff, each kind with its
own budget, each attempt announced by a ``retry`` event, the partial output of
the failed attempt discarded. A response cut by ``max_tokens`` is continued.
A refusal ends the run and leaves the context as it was before the request.
A 400 fails at once.

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
import dataclasses
import time
import uuid
from collections import Counter
from collections.abc import AsyncGenerator, Iterable
from typing import Any, TypeVar

from chimera.core.bus import EventBus
from chimera.core.context import SnapshotUnavailable, git_snapshot, project_instructions
from chimera.core.env import Environment
from chimera.core.errors import ProviderError, ReplayDiverged, SessionError
from chimera.core.events import (
    BranchCreated,
    CheckpointCreated,
    MessageCompleted,
    ReminderInjected,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ThinkingDelta,
    TurnStarted,
    UsageReported,
)
from chimera.core.executor import Executor, ToolCall, ToolOutcome
from chimera.core.gitsafe import GitStop
from chimera.core.guards import STUCK_REMINDER, StuckDetector, over_budget
from chimera.core.loop_types import CONTINUE_PROMPT, LoopStrategy, Outcome, Pins, Recorder, RunInProgress, Stop
from chimera.core.permissions import PermissionPolicy
from chimera.core.prompts import system_prompt
from chimera.core.providers.base import Message, ModelDone, ModelRequest, Provider, TextChunk, ThinkingChunk
from chimera.core.redact import Redactor
from chimera.core.reminders import ReminderState
from chimera.core.session_tree import REMINDER_OPEN, content_blocks
from chimera.core.strict_json import TOO_DEEP, clean_json, strict_message
from chimera.core.tool_group import ToolGroup
from chimera.core.wording import plural

__all__ = ["CONTINUE_PROMPT", "AgentLoop", "LoopStrategy", "Outcome", "Pins", "Recorder", "RunInProgress"]

_E = TypeVar("_E", bound=StepEvent)


class AgentLoop:
    """The agent's core: a conversation, a provider, tools, and an event stream.

    Args:
        provider: the model.
        tools: the tools offered; ``think`` is dropped when the model thinks natively.
        env: the workspace the tools act on.
        strategy: how turns are driven (ReAct when None).
        session_id: the session this run belongs to (a new id when None).
        messages: an earlier conversation to continue.
        bus: where every event is published as it happens.
        policy: the permission policy (everything allowed when None).
        can_ask: whether someone answers permission requests.
        recorder: the session that keeps every message (none when None).
        node_id: the session node the conversation stands at (for a resumed session).
        pins: where the workspace is snapshotted at user turns and around tool calls that
            can change files (no checkpoints when None).
    """

    def __init__(
        self,
        provider: Provider,
        tools: ToolGroup,
        env: Environment,
        *,
        strategy: LoopStrategy | None = None,
        session_id: str | None = None,
        messages: list[Message] | None = None,
        bus: EventBus | None = None,
        policy: PermissionPolicy | None = None,
        can_ask: bool = False,
        recorder: Recorder | None = None,
        node_id: str | None = None,
        pins: Pins | None = None,
    ) -> None:
        if strategy is None:
            from chimera.core.loop import ReAct

            strategy = ReAct()
        self.provider = provider
        self.strategy = strategy
        self.config = strategy.config
        self.env = env
        self.bus = bus
        self.tools = tools.without("think") if provider.native_thinking else tools
        self.session_id = session_id or new_id()
        # A session saved before its values were cleaned may hold what strict JSON cannot carry.
        self.messages: list[Message] = [strict_message(m) for m in messages or []]
        self.recorder = recorder
        self.node_id = node_id
        self.pins = pins
        self.redactor = Redactor(getattr(provider, "secrets", ()))
        self.executor = Executor(
            self.tools,
            env.workdir,
            env.spill_dir,
            max_output=self.config.max_output,
            concurrency=self.config.concurrency,
            policy=policy,
            can_ask=can_ask,
            secrets=getattr(provider, "secrets", ()),
        )
        self.system: str | None = None
        self.run_id = ""
        self.steps = 0
        self.cost = 0.0
        self.tokens = 0
        self._reached_model = False
        self._reminders = ReminderState()
        self._stuck = StuckDetector(self.config.stuck_after)
        self._interrupt_pending = False
        self._starting: GitStop | None = None  # the snapshot's git calls, while the run starts
        self._notes: list[str] = []  # what the first run_started tells the person
        self._started = 0.0
        self._seq = 0
        self._out: asyncio.Queue[StepEvent | None] | None = None
        self._work: asyncio.Task[Outcome] | None = None

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
        if self._out is not None:
            self._out.put_nowait(stamped)
        return stamped

    @property
    def running(self) -> bool:
        return self._out is not None

    async def run(self, task: str) -> AsyncGenerator[StepEvent, None]:
        """Work on ``task``; yield every step event, ending with ``run_finished``.

        Close the iterator (``contextlib.aclosing``) to stop early: the run is then
        interrupted and still finishes properly (its last events go to the bus).
        """
        if self._out is not None:
            raise RunInProgress("a run of this loop is already going: interrupt it or wait for it to finish")
        task = clean_json(task)  # e.g. bytes that are not UTF-8 on the command line (a replay passes blocks)
        self.run_id = new_id()
        self._seq = 0
        self.steps = 0
        self.cost = 0.0
        self.tokens = 0
        self._reminders = ReminderState()
        self._interrupt_pending = False
        self._started = time.monotonic()
        out: asyncio.Queue[StepEvent | None] = asyncio.Queue()
        self._out = out
        driver = asyncio.create_task(self._drive(task, out))
        try:
            while (event := await out.get()) is not None:
                yield event
        finally:
            if not driver.done():
                # The reader left (cancelled, or closed the iterator): end the run properly.
                self.interrupt()
                await asyncio.wait({driver}, timeout=10)
                if not driver.done():
                    driver.cancel()
            self._out = None

    def interrupt(self) -> None:
        """Stop the current run: the stream ends, tools are killed, ``run_finished`` says ``interrupted``."""
        if self._work is not None and not self._work.done():
            self._work.cancel()
        elif self._out is not None and self._work is None:
            self._interrupt_pending = True  # the run is still starting: cancel its work as soon as it exists
            if self._starting is not None:
                self._starting.stop()  # and do not wait for a git that hangs

    async def _drive(self, task: str, out: asyncio.Queue[StepEvent | None]) -> None:
        if self.system is None:
            starting = self._starting = GitStop()
            if self._interrupt_pending:
                starting.stop()
            try:
                system = await asyncio.to_thread(self._build_system, starting)
            finally:
                self._starting = None
            if not starting.stopped:  # cut short by an interrupt: the next run builds it again
                self.system = system
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
        try:
            async with asyncio.timeout(self.config.time_limit):
                outcome = await work
        except Stop as stop:
            outcome = stop.outcome
        except ProviderError as err:
            outcome = Outcome(False, err.kind, error=str(err))
        except ReplayDiverged as err:
            outcome = Outcome(False, "diverged", error=str(err))
        except SessionError as err:
            outcome = Outcome(False, "session", error=str(err))
        except TimeoutError:
            limit = self.config.time_limit
            error = f"stopped at the wall-time limit of {limit:g}s: raise --max-time to let it go on"
            outcome = Outcome(False, "time_limit", error=error)
        except asyncio.CancelledError:
            outcome = Outcome(False, "interrupted", error="the run was interrupted")
        except Exception as err:  # never leave the reader of run() waiting for an end that will not come
            outcome = Outcome(False, "error", error=f"the run failed: {type(err).__name__}: {err}")
        finally:
            self._work = None
        self.emit(
            RunFinished(
                success=outcome.success,
                reason=outcome.reason,
                steps=self.steps,
                cost=round(self.cost, 6),
                error=outcome.error,
                answer=outcome.answer,
            )
        )
        out.put_nowait(None)

    def _build_system(self, stop: GitStop) -> str:
        workdir = self.env.workdir
        try:
            git = git_snapshot(workdir, stop=stop)
        except SnapshotUnavailable as err:
            if not stop.stopped:
                self._notes.append(f"the git snapshot is unavailable: {err}")
            git = "The git snapshot is unavailable: git did not answer in time, so branch and status are unknown."
        return self.redactor.mask(
            system_prompt(workdir, tools=self.tools.names, git=git, instructions=project_instructions(workdir))
        )

    # --- primitives for strategies ---------------------------------------------------

    async def react(self, prompt: str | list[dict[str, Any]]) -> Outcome:
        """Add ``prompt`` as a user message and run turns until the model stops calling tools."""
        if self.recorder is not None and self.recorder.children_of(self.node_id):
            self.emit(BranchCreated(from_node=self.node_id or ""))
        self._append("user", {"role": "user", "content": prompt}, sync=True)
        await self._pin()
        cut: list[str] = []  # the text of responses cut by max_tokens, which the next one continues
        while True:
            if self.steps >= self.config.max_steps:
                turns = plural(self.steps, "turn")
                error = f"stopped after {turns} (the limit): raise --max-turns to let it go on"
                raise Stop(Outcome(False, "max_turns", error=error))
            self.steps += 1
            self.emit(TurnStarted(turn=self.steps))
            done = await self.query()
            if done.stop_reason == "refusal":
                return Outcome(False, "refusal", answer=_text_of(done.message), error="the model declined the request")
            calls = [ToolCall.from_block(b) for b in done.message["content"] if b.get("type") == "tool_use"]
            try:
                self._check_budgets()
            except Stop as over:
                if calls:  # the calls will not run: answer them so the conversation stays valid
                    skipped = [self.executor.skipped(c, over.outcome.error) for c in calls]
                    self._append("tool_result", _results(skipped), sync=True)
                raise
            if done.stop_reason == "max_tokens" and not calls:
                if len(cut) >= self.config.retry.max_continuations:
                    return Outcome(False, "max_tokens", error="the answer kept hitting the output limit")
                cut.append(_joined_text(done.message))
                self.emit(RetryScheduled(reason="max_tokens", attempt=len(cut), wait_s=0.0, discards_partial=False))
                self._append("user", {"role": "user", "content": CONTINUE_PROMPT})
                continue
            if not calls:
                return Outcome(True, "completed", answer=("".join(cut) + _joined_text(done.message)).strip())
            cut.clear()
            stop = await self._run_tools(calls)
            if stop is not None:
                raise Stop(stop)

    async def _run_tools(self, calls: list[ToolCall]) -> Outcome | None:
        """Run one message's calls; their results become the next node. Returns the outcome that stops a stuck run.

        Calls that can change files are framed by two pins (before and after), so a
        switch can tell the agent's changes from the person's. Interrupted, every call
        still gets a result (a finished one, or "cancelled") and the after-pin is taken.
        """
        changes_files = any(not self._read_only(c) for c in calls)
        asked_from = self.node_id
        done: dict[str, ToolOutcome] = {}

        def keep(outcome: ToolOutcome) -> None:
            if self.recorder is not None and asked_from is not None:
                self.recorder.record_result(asked_from, outcome.block())

        try:
            if changes_files:
                await self._pin()  # the files as they were before these calls
            outcomes = await self.executor.run(calls, self.emit, done, on_done=keep)
        except asyncio.CancelledError:
            finished = []
            for call in calls:
                outcome = done.get(call.id)
                if outcome is None:
                    outcome = self.executor.cancelled(call)
                    self.emit(outcome.finished_event())
                finished.append(outcome)
            self._append("tool_result", _results(finished), sync=True)
            if changes_files:
                await asyncio.shield(self._pin(_written(finished)))
            raise
        texts, stop = self._after_tools(outcomes)
        self._append("tool_result", _results(outcomes, _reminder_blocks(texts)), sync=True)
        for text in texts:
            self.emit(ReminderInjected(text=text))
        if changes_files:
            await self._pin(_written(outcomes))
        return stop

    def _read_only(self, call: ToolCall) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and tool.read_only

    async def _pin(self, wrote: dict[str, bool] | None = None) -> None:
        if self.pins is not None and self.node_id is not None:
            commit = await self.pins.pin(self.node_id, wrote)
            if commit is not None:
                self.emit(CheckpointCreated(snapshot=commit))

    def _after_tools(self, outcomes: list[ToolOutcome]) -> tuple[list[str], Outcome | None]:
        """Reminders due after these results, and the outcome that stops a stuck run."""
        texts = [r.text for r in self._reminders.due(outcomes)]
        verdict = self._stuck.observe(outcomes)
        repeats = self._stuck.repeats
        if verdict == "stop":
            error = f"the same call gave the same result {repeats} times in a row, even after a reminder"
            return [], Outcome(False, "stuck", error=error)
        if verdict == "remind":
            texts.append(STUCK_REMINDER.format(repeats=repeats))
        return texts, None

    def _check_budgets(self) -> None:
        over = over_budget(self.config, tokens=self.tokens, cost=self.cost)
        if over is not None:
            raise Stop(Outcome(False, "budget", error=over))

    def _append(self, kind: str, message: Message, *, sync: bool = False) -> None:
        """Add a message to the context and to the session; it becomes the leaf.

        In the context a user message that follows a user message is merged into it
        (the API wants turns to alternate); the session keeps them as two nodes.
        ``sync`` makes the session durable up to here (a turn boundary). Whatever the message
        holds, the context and the session get it as strict JSON (``strict_json.clean_json``).
        """
        message = self.redactor.mask_value(clean_json(message))
        if self.recorder is not None:  # first on disk: if saving fails, memory does not run ahead of it
            self.node_id = self.recorder.record(kind, message, sync=sync)
        last = self.messages[-1] if self.messages else None
        if last is not None and last["role"] == message["role"] == "user":
            merged = content_blocks(last["content"]) + content_blocks(message["content"])
            self.messages[-1] = {"role": "user", "content": merged}
        else:
            self.messages.append(message)

    async def query(self) -> ModelDone:
        """One model request over the current context, retried in stages; partial output is never kept.

        The answer joins the conversation (and the session) as the new leaf, unless it is a refusal.
        """
        policy = self.config.retry
        attempts: Counter[str] = Counter()
        while True:
            request = ModelRequest(
                system=self.system or "",
                messages=self.messages,
                tools=self.tools.schemas(),
                max_tokens=self.config.max_tokens,
            )
            try:
                done = await self._stream(request)
            except ProviderError as err:
                if err.kind == "unreachable" and self._reached_model:
                    # The server answered before, so this is a dropped network, not a wrong URL.
                    err = ProviderError(str(err), kind="connection", retryable=True)
                budget = policy.unreachable_retries if err.kind == "unreachable" else policy.max_retries
                if not err.retryable or attempts[err.kind] >= budget:
                    raise err from None
                attempts[err.kind] += 1
                wait = policy.wait(attempts[err.kind], err.retry_after)
                if wait > policy.max_retry_after:
                    raise ProviderError(
                        f"{err} — the server asks to wait {wait:.0f}s; try again later",
                        kind=err.kind,
                        retryable=False,
                    ) from None
                self.emit(RetryScheduled(reason=err.kind, attempt=attempts[err.kind], wait_s=wait, detail=str(err)))
                await asyncio.sleep(wait)
                continue
            self._reached_model = True
            usage = done.usage
            self.cost += usage.cost
            self.tokens += usage.input_tokens + usage.output_tokens
            if done.stop_reason != "refusal":  # a refusal leaves the context as it was
                self._append("assistant", _sendable(done.message))
            self.emit(MessageCompleted(message=_sendable(done.message), stop_reason=done.stop_reason))
            self.emit(
                UsageReported(
                    input_tokens=usage.input_tokens,
                    output_tokens=usage.output_tokens,
                    cache_read_tokens=usage.cache_read_tokens,
                    cache_write_tokens=usage.cache_write_tokens,
                    cost=round(usage.cost, 6),
                    total_cost=round(self.cost, 6),
                )
            )
            return done

    async def _stream(self, request: ModelRequest) -> ModelDone:
        # A secret may straddle two deltas: each kind's text is masked as one stream, in order.
        text, thinking = self.redactor.stream(), self.redactor.stream()
        async for chunk in self.provider.stream(request):
            if isinstance(chunk, TextChunk):
                self._emit_delta(ThinkingDelta, thinking.flush())
                self._emit_delta(TextDelta, text.feed(chunk.text))
            elif isinstance(chunk, ThinkingChunk):
                self._emit_delta(TextDelta, text.flush())
                self._emit_delta(ThinkingDelta, thinking.feed(chunk.text))
            else:
                self._emit_delta(ThinkingDelta, thinking.flush())
                self._emit_delta(TextDelta, text.flush())
                # Whatever the provider (a recording from before values were cleaned), strict JSON from here on,
                # and no tool input nested deeper than the walks that read it can go.
                message = strict_message(chunk.message)
                return chunk if message is chunk.message else dataclasses.replace(chunk, message=message)
        raise ProviderError("the model stream ended without a message", kind="incomplete", retryable=True)

    def _emit_delta(self, kind: type[TextDelta] | type[ThinkingDelta], text: str) -> None:
        if text:
            self.emit(kind(text=text))


def new_id() -> str:
    """A short random id, sortable by creation time."""
    return f"{int(time.time() * 1000):x}{uuid.uuid4().hex[:8]}"


def _results(outcomes: Iterable[ToolOutcome], notes: Iterable[dict[str, Any]] = ()) -> Message:
    return {"role": "user", "content": [o.block() for o in outcomes] + list(notes)}


_FILE_WRITERS = frozenset({"write", "edit"})  # Chimera's own tools that say which file they wrote


def _written(outcomes: Iterable[ToolOutcome]) -> dict[str, bool]:
    """The paths Chimera's ``write``/``edit`` wrote in these calls, each True when ``write`` created it.

    A file that appears while any other call runs (``bash``) may be the person's: it is not here.
    """
    wrote: dict[str, bool] = {}
    for outcome in outcomes:
        path = outcome.result.data.get("path")
        if outcome.call.name in _FILE_WRITERS and not outcome.result.is_error and isinstance(path, str):
            wrote[path] = wrote.get(path, False) or outcome.result.data.get("created") is True
    return wrote


def _reminder_blocks(texts: Iterable[str]) -> list[dict[str, Any]]:
    return [{"type": "text", "text": f"{REMINDER_OPEN}{text}</system-reminder>"} for text in texts]


def _text_of(message: Message) -> str:
    return _joined_text(message).strip()


def _joined_text(message: Message) -> str:
    return "".join(b.get("text", "") for b in message.get("content", []) if b.get("type") == "text")


def _sendable(message: Message) -> Message:
    """The message as it can go back to the model: tool inputs are objects, content is never empty."""
    content: list[dict[str, Any]] = []
    for block in message.get("content", []):
        if block.get("type") == "tool_use" and not _is_plain_input(block.get("input")):
            block = {**block, "input": {}}
        content.append(block)
    if not content:
        content.append({"type": "text", "text": "(no answer)"})
    return {"role": "assistant", "content": content}


def _is_plain_input(value: object) -> bool:
    return isinstance(value, dict) and "__invalid_json__" not in value and TOO_DEEP not in value
