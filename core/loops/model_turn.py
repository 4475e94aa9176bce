"""Provides ``ModelTurn``: the model's side of the loop's turns, and ``with_room``.

:meth:`ModelTurn.ask` sends one request and streams the answer: its text and
thinking deltas are published as they come (masked, even a secret cut across
two deltas), failures worth retrying are retried in stages (``loops.recovery``),
and what the answer cost counts toward the run's usage. :meth:`ModelTurn.report`
publishes that usage, with the context's size as the API last reported it.

:func:`with_room` asks once more, after compacting the conversation, when the
API says the prompt is too long. The loop (``chimera.core.agent_loop.AgentLoop``) builds
the requests from its conversation and decides what the answers join.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from chimera.core.errors import ProviderError
from chimera.core.events import StepEvent, TextDelta, ThinkingDelta, UsageReported
from chimera.core.loop_config import RetryPolicy
from chimera.core.loops.recovery import Recovery
from chimera.core.providers.base import ModelDone, ModelRequest, Provider, TextChunk, ThinkingChunk
from chimera.core.redact import Redactor
from chimera.core.strict_json import strict_message

__all__ = ["DEFAULT_WINDOW", "ModelTurn", "with_room"]

DEFAULT_WINDOW = 200_000  # tokens of context, when the provider does not say


class ModelTurn:
    """Requests to ``provider``, streamed, retried by ``retry`` and counted; events go to ``emit``.

    ``cost`` and ``tokens`` are the run's so far (:meth:`new_run` starts them again);
    ``context_tokens`` is the conversation's size as the API last reported it, and
    ``window`` the model's context window (from the provider, else ``DEFAULT_WINDOW``).
    """

    def __init__(
        self, provider: Provider, redactor: Redactor, emit: Callable[[StepEvent], object], retry: RetryPolicy
    ) -> None:
        self.provider = provider
        self.redactor = redactor
        self.emit = emit
        self.recovery = Recovery(retry, emit)
        self.window: int = getattr(provider, "context_window", None) or DEFAULT_WINDOW
        self.cost = 0.0
        self.tokens = 0
        self.context_tokens = 0

    def new_run(self) -> None:
        """A run starts: its cost and tokens count from nothing."""
        self.cost = 0.0
        self.tokens = 0

    async def ask(self, request: ModelRequest, *, quiet: bool = False) -> ModelDone:
        """``request`` answered, retried in stages (partial output is never kept), its cost counted.

        ``quiet``: no text or thinking deltas (answers requested side by side, a summary).
        """
        done = await self.recovery.request(lambda: self._stream(request, quiet=quiet))
        self.cost += done.usage.cost
        self.tokens += done.usage.input_tokens + done.usage.output_tokens
        return done

    def measure(self, done: ModelDone) -> None:
        """``done`` joined the conversation: the context is now as big as its request and its answer."""
        usage = done.usage
        self.context_tokens = (
            usage.input_tokens + usage.cache_read_tokens + usage.cache_write_tokens + usage.output_tokens
        )

    def report(self, done: ModelDone) -> None:
        """Publish a ``usage`` event for ``done``, with the run's cost so far and the context's size."""
        usage = done.usage
        self.emit(
            UsageReported(
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                cache_read_tokens=usage.cache_read_tokens,
                cache_write_tokens=usage.cache_write_tokens,
                cost=round(usage.cost, 6),
                total_cost=round(self.cost, 6),
                context_tokens=self.context_tokens,
                context_window=self.window,
            )
        )

    async def _stream(self, request: ModelRequest, *, quiet: bool = False) -> ModelDone:
        # A secret may straddle two deltas: each kind's text is masked as one stream, in order.
        text, thinking = self.redactor.stream(), self.redactor.stream()
        async for chunk in self.provider.stream(request):
            if quiet and not isinstance(chunk, ModelDone):
                continue
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


async def with_room(ask: Callable[[], Awaitable[ModelDone]], compact: Callable[[], Awaitable[bool]]) -> ModelDone:
    """``ask()``; when the API says the prompt is too long, ``compact()`` the conversation (False: it could
    not) and ask once more."""
    try:
        return await ask()
    except ProviderError as err:
        if err.kind != "prompt_too_long" or not await compact():
            raise
    try:
        return await ask()
    except ProviderError as err:
        if err.kind != "prompt_too_long":
            raise
        raise ProviderError(
            f"{err}, even after compacting the conversation: branch from an earlier point, or start a new session",
            kind=err.kind,
            retryable=False,
        ) from None
