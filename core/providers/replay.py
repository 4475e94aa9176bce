"""Provides ``ReplayProvider``: a model that answers with recorded assistant messages.

It serves one recorded message per request, in order, streaming its text and
thinking in small pieces so that readers see it arrive as they would from a
live model. It powers replay, the offline demo and deterministic tests.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from chimera.core.errors import ConfigError, ProviderError
from chimera.core.providers.base import (
    Message,
    ModelChunk,
    ModelDone,
    ModelRequest,
    TextChunk,
    ThinkingChunk,
    Usage,
)
from chimera.core.providers.pace import Pace

__all__ = ["RECORDING_ENDED", "RecordedTurn", "Recording", "ReplayProvider"]

RECORDING_ENDED = "recording_ended"
"""The kind of the error a request past the end of a recorded run that stopped early gets."""

_PIECE = re.compile(r"\S+\s*|\s+")
_AT_ONCE = 4096  # characters a piece may join when a turn plays at once


def _run_length(pieces: list[TextChunk | ThinkingChunk], start: int) -> int:
    """How many pieces from ``start`` on are of one kind and fit in ``_AT_ONCE`` characters together (at least 1)."""
    kind, size, end = type(pieces[start]), 0, start
    while (
        end < len(pieces) and type(pieces[end]) is kind and (end == start or size + len(pieces[end].text) <= _AT_ONCE)
    ):
        size += len(pieces[end].text)
        end += 1
    return end - start


@dataclass(frozen=True, slots=True)
class RecordedTurn:
    """One assistant message as the model sent it, with its stop reason, usage and how long it took."""

    message: Message
    stop_reason: str = "end_turn"
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Recording:
    """A task and the assistant turns that answered it."""

    task: str
    model: str
    turns: tuple[RecordedTurn, ...]

    @classmethod
    def load(cls, path: Path) -> Recording:
        """Read a recording from a JSON file: ``{"task", "model", "turns": [{"message", ...}]}``."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            turns = tuple(_turn(t) for t in data["turns"])
            return cls(task=str(data["task"]), model=str(data.get("model", "replay")), turns=turns)
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ConfigError(f"cannot read the recording {path}: {err}") from None


def _turn(data: dict[str, Any]) -> RecordedTurn:
    message = data["message"]
    stop = data.get("stop_reason") or (
        "tool_use" if any(b.get("type") == "tool_use" for b in message["content"]) else "end_turn"
    )
    return RecordedTurn(message=message, stop_reason=stop, usage=Usage(**data.get("usage", {})))


class ReplayProvider:
    """Answers each request with the next recorded turn.

    Args:
        turns: the recorded assistant turns, served in order.
        model: the name reported in events.
        pace: seconds to wait between streamed pieces (0 streams as fast as it can).
        ending: why the recording has no turn after these (the recorded run stopped there):
            a request past the last turn then fails with kind ``ending_kind`` (``recording_ended``
            unless the recorded run ended another way, such as ``bad_request``) and this text,
            instead of ``replay_exhausted``.
        secrets: values masked wherever the loop it drives writes (the process's API keys,
            for a replay): the loop reads them as it reads a live provider's.
        clock: plays each turn in its recorded time at the clock's speed, and holds while
            it is paused (``pace`` is then unused).
    """

    def __init__(
        self,
        turns: Iterable[RecordedTurn],
        *,
        model: str = "replay",
        pace: float = 0.0,
        ending: str | None = None,
        ending_kind: str = RECORDING_ENDED,
        secrets: Iterable[str] = (),
        clock: Pace | None = None,
    ) -> None:
        self._turns = list(turns)
        self._model = model
        self.pace = pace
        self.ending = ending
        self.ending_kind = ending_kind
        self.secrets = tuple(secrets)
        self.clock = clock
        self.position = 0
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_recording(cls, recording: Recording, *, pace: float = 0.0) -> ReplayProvider:
        return cls(recording.turns, model=recording.model, pace=pace)

    @property
    def model(self) -> str:
        return self._model

    @property
    def native_thinking(self) -> bool:
        return any(
            block.get("type") in {"thinking", "redacted_thinking"}
            for turn in self._turns
            for block in turn.message["content"]
        )

    @property
    def remaining(self) -> int:
        return len(self._turns) - self.position

    async def aclose(self) -> None:
        return None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if self.position >= len(self._turns) and self.ending is not None:
            raise ProviderError(self.ending, kind=self.ending_kind, retryable=False)
        if self.position >= len(self._turns):
            raise ProviderError(
                "the recording has no more turns: the run asked the model more often than it was recorded",
                kind="replay_exhausted",
                retryable=False,
            )
        turn = self._turns[self.position]
        self.position += 1
        self.requests.append(copy.deepcopy(request))  # as sent: the loop goes on changing its lists
        if self.clock is not None:
            await self.clock.turn()
        pieces = [
            (ThinkingChunk if block.get("type") == "thinking" else TextChunk)(piece)
            for block in turn.message["content"]
            if block.get("type") in {"thinking", "text"}
            for piece in _PIECE.findall(block.get("thinking" if block["type"] == "thinking" else "text", ""))
        ]
        rest = turn.seconds / max(1, len(pieces))  # the recorded time, spread over what streams
        index = 0
        while index < len(pieces):
            # Played at once, words go out joined (up to _AT_ONCE characters of one kind): a reader's
            # cost is per piece, and a long answer would otherwise cost it a piece a word.
            count = _run_length(pieces, index) if self._at_once() else 1
            piece = pieces[index]
            yield type(piece)("".join(p.text for p in pieces[index : index + count])) if count > 1 else piece
            index += count
            await self._rest(rest * count)
        if not pieces:
            await self._rest(rest)
        yield ModelDone(message=turn.message, stop_reason=turn.stop_reason, usage=turn.usage)

    def _at_once(self) -> bool:
        return self.clock.at_once if self.clock is not None else self.pace == 0

    async def _rest(self, recorded: float) -> None:
        if self.clock is not None:
            await self.clock.wait(recorded)
        else:
            await asyncio.sleep(self.pace)  # 0 still lets the rest of the program run between pieces
