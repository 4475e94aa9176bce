"""Provides the ``Provider`` protocol and the values that cross it.

A provider turns a :class:`ModelRequest` into a stream of :class:`ModelChunk`
values that ends with exactly one :class:`ModelDone`, or raises
:class:`~chimera.core.errors.ProviderError`. A stream that ends without
``ModelDone`` is incomplete, and its partial output must not be used.
Messages are plain dicts in the Messages API shape, so thinking blocks and
their signatures go back to the model byte for byte.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "Message",
    "ModelChunk",
    "ModelDone",
    "ModelRequest",
    "Provider",
    "TextChunk",
    "ThinkingChunk",
    "Usage",
]

Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """One call to the model: the whole context, the tools it may call, the limits."""

    system: str
    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    max_tokens: int = 16_000
    thinking: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one response consumed, and what they cost in US dollars."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0


@dataclass(frozen=True, slots=True)
class TextChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ThinkingChunk:
    text: str


@dataclass(frozen=True, slots=True)
class ModelDone:
    """The complete assistant message, its stop reason and its usage."""

    message: Message
    stop_reason: str
    usage: Usage


ModelChunk = TextChunk | ThinkingChunk | ModelDone


@runtime_checkable
class Provider(Protocol):
    """Something that answers model requests as a stream."""

    @property
    def model(self) -> str:
        """The model name requests go to."""
        ...

    @property
    def native_thinking(self) -> bool:
        """True when the model thinks natively, so the ``think`` tool is not offered."""
        ...

    def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        """Stream the answer to ``request``; the last item is a :class:`ModelDone`."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...
