"""Provides ``AgentLoop``: the one async core that every loop strategy drives.

``AgentLoop.run(task)`` is an async generator of step events. Inside, a
strategy (ReAct by default) calls the core's primitives: :meth:`react` runs
turns (query the model, run the tools it asks for) until the model answers
without a tool call; :meth:`query` makes one model request with staged
recovery. The conversation survives between runs, so a second ``run`` is a
follow-up in the same context.

Recovery, in stages: the provider's failures that are worth retrying (rate
limits, overload, a mid-stream ``error`` event, a stream cut before
``message_stop``, a stalled stream, an unreachable server) are retried with
backoff, each attempt announced by a ``retry`` event, the partial output of
the failed attempt discarded. A response cut by ``max_tokens`` is continued.
A refusal ends the run and leaves the context as it was before the request.
A 400 fails at once.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any, Protocol

from chimera.core.env import Environment
from chimera.core.errors import ProviderError
from chimera.core.events import (
    MessageCompleted,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ThinkingDelta,
    TurnStarted,
    UsageReported,
)
from chimera.core.executor import Executor, ToolCall
from chimera.core.loop_config import LoopConfig
from chimera.core.prompts import system_prompt
from chimera.core.providers.base import Message, ModelDone, ModelRequest, Provider, TextChunk, ThinkingChunk
from chimera.core.tool_group import ToolGroup

__all__ = ["AgentLoop", "LoopStrategy", "Outcome"]

_CONTINUE = "Your last response was cut off by the output limit. Continue exactly where it stopped."


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a strategy's drive ended."""

    success: bool
    reason: str
    answer: str = ""
    error: str = ""


class LoopStrategy(Protocol):
    """A way to drive the core: ReAct, plan-and-execute, reflexion, tree of thought."""

    name: str
    config: LoopConfig

    async def drive(self, core: AgentLoop, task: str) -> Outcome:
        """Work on ``task`` through the core's primitives and say how it ended."""
        ...


class AgentLoop:
    """The agent's core: a conversation, a provider, tools, and an event stream.

    Args:
        provider: the model.
        tools: the tools offered; ``think`` is dropped when the model thinks natively.
        env: the workspace the tools act on.
        strategy: how turns are driven (ReAct when None).
        session_id: the session this run belongs to (a new id when None).
        messages: an earlier conversation to continue.
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
    ) -> None:
        if strategy is None:
            from chimera.core.loop import ReAct

            strategy = ReAct()
        self.provider = provider
        self.strategy = strategy
        self.config = strategy.config
        self.env = env
        self.tools = tools.without("think") if provider.native_thinking else tools
        self.session_id = session_id or new_id()
        self.messages: list[Message] = list(messages or [])
        self.executor = Executor(
            self.tools,
            env.workdir,
            env.spill_dir,
            max_output=self.config.max_output,
            concurrency=self.config.concurrency,
        )
        self.system = system_prompt(env.workdir, tools=self.tools.names)
        self.run_id = ""
        self.steps = 0
        self.cost = 0.0
        self._seq = 0
        self._out: asyncio.Queue[StepEvent | None] | None = None

    # --- events -----------------------------------------------------------------------

    def emit(self, cls: type[StepEvent], fields: dict[str, Any] | None = None) -> StepEvent:
        """Stamp and queue one event of kind ``cls`` for the reader of :meth:`run`."""
        self._seq += 1
        event = cls(run_id=self.run_id, session_id=self.session_id, seq=self._seq, ts=time.time(), **(fields or {}))
        if self._out is not None:
            self._out.put_nowait(event)
        return event

    async def run(self, task: str) -> AsyncIterator[StepEvent]:
        """Work on ``task``; yield every step event, ending with ``run_finished``."""
        self.run_id = new_id()
        self._seq = 0
        self.steps = 0
        self.cost = 0.0
        out: asyncio.Queue[StepEvent | None] = asyncio.Queue()
        self._out = out
        driver = asyncio.create_task(self._drive(task))
        try:
            while (event := await out.get()) is not None:
                yield event
        finally:
            if not driver.done():
                driver.cancel()
            await asyncio.gather(driver, return_exceptions=True)
            self._out = None

    async def _drive(self, task: str) -> None:
        assert self._out is not None
        self.emit(
            RunStarted,
            {
                "task": task,
                "model": self.provider.model,
                "loop": self.strategy.name,
                "workdir": str(self.env.workdir),
            },
        )
        try:
            outcome = await self.strategy.drive(self, task)
        except ProviderError as err:
            outcome = Outcome(False, err.kind, error=str(err))
        except asyncio.CancelledError:
            outcome = Outcome(False, "interrupted", error="the run was interrupted")
        except Exception as err:  # never leave the reader of run() waiting for an end that will not come
            outcome = Outcome(False, "error", error=f"the run failed: {type(err).__name__}: {err}")
        self.emit(
            RunFinished,
            {
                "success": outcome.success,
                "reason": outcome.reason,
                "steps": self.steps,
                "cost": round(self.cost, 6),
                "error": outcome.error,
                "answer": outcome.answer,
            },
        )
        self._out.put_nowait(None)

    # --- primitives for strategies ---------------------------------------------------

    async def react(self, prompt: str | list[dict[str, Any]]) -> Outcome:
        """Add ``prompt`` as a user message and run turns until the model stops calling tools."""
        self.messages.append({"role": "user", "content": prompt})
        continuations = 0
        cut: list[str] = []  # the text of responses cut by max_tokens, which the next one continues
        while True:
            if self.steps >= self.config.max_steps:
                return Outcome(
                    False,
                    "max_turns",
                    error=f"stopped after {self.steps} turns (the limit): raise --max-turns to let it go on",
                )
            self.steps += 1
            self.emit(TurnStarted, {"turn": self.steps})
            done = await self.query()
            if done.stop_reason == "refusal":
                return Outcome(False, "refusal", answer=_text_of(done.message), error="the model declined the request")
            calls = [ToolCall.from_block(b) for b in done.message["content"] if b.get("type") == "tool_use"]
            message = _sendable(done.message)
            self.messages.append(message)
            if done.stop_reason == "max_tokens" and not calls:
                continuations += 1
                if continuations > self.config.retry.max_continuations:
                    return Outcome(False, "max_tokens", error="the answer kept hitting the output limit")
                cut.append(_joined_text(message))
                self.emit(RetryScheduled, {"reason": "max_tokens", "attempt": continuations, "wait_s": 0.0})
                self.messages.append({"role": "user", "content": _CONTINUE})
                continue
            if not calls:
                return Outcome(True, "completed", answer=("".join(cut) + _joined_text(message)).strip())
            cut.clear()
            outcomes = await self.executor.run(calls, self.emit)
            self.messages.append({"role": "user", "content": [o.block() for o in outcomes]})

    async def query(self) -> ModelDone:
        """One model request over the current context, retried in stages; partial output is never kept."""
        policy = self.config.retry
        attempt = 0
        while True:
            request = ModelRequest(
                system=self.system,
                messages=self.messages,
                tools=self.tools.schemas(),
                max_tokens=self.config.max_tokens,
            )
            try:
                done = await self._stream(request)
            except ProviderError as err:
                budget = policy.unreachable_retries if err.kind == "unreachable" else policy.max_retries
                if not err.retryable or attempt >= budget:
                    raise
                attempt += 1
                wait = policy.wait(attempt, err.retry_after)
                if wait > policy.max_retry_after:
                    raise ProviderError(
                        f"{err} — the server asks to wait {wait:.0f}s; try again later",
                        kind=err.kind,
                        retryable=False,
                    ) from None
                self.emit(
                    RetryScheduled,
                    {"reason": err.kind, "attempt": attempt, "wait_s": wait, "detail": str(err)},
                )
                await asyncio.sleep(wait)
                continue
            self.cost += done.usage.cost
            self.emit(MessageCompleted, {"message": _sendable(done.message), "stop_reason": done.stop_reason})
            self.emit(
                UsageReported,
                {
                    "input_tokens": done.usage.input_tokens,
                    "output_tokens": done.usage.output_tokens,
                    "cache_read_tokens": done.usage.cache_read_tokens,
                    "cache_write_tokens": done.usage.cache_write_tokens,
                    "cost": round(done.usage.cost, 6),
                    "total_cost": round(self.cost, 6),
                },
            )
            return done

    async def _stream(self, request: ModelRequest) -> ModelDone:
        async for chunk in self.provider.stream(request):
            if isinstance(chunk, TextChunk):
                self.emit(TextDelta, {"text": chunk.text})
            elif isinstance(chunk, ThinkingChunk):
                self.emit(ThinkingDelta, {"text": chunk.text})
            else:
                return chunk
        raise ProviderError("the model stream ended without a message", kind="incomplete", retryable=True)


def new_id() -> str:
    """A short random id, sortable by creation time."""
    return f"{int(time.time() * 1000):x}{uuid.uuid4().hex[:8]}"


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
    return isinstance(value, dict) and "__invalid_json__" not in value
