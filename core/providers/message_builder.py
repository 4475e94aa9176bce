"""Provides ``MessageBuilder``: an assistant message assembled from the Messages API's stream events.

Every block comes back as the server sent it (thinking with its signature,
redacted thinking, tool use with its input parsed from the streamed JSON), so it
can go back to the model unchanged. Text and thinking stream out as they arrive.
The server is untrusted: what it sends is cleaned to strict JSON, and token
counts that are not sound whole numbers are ignored. The stream's shape is
checked as it comes (``StreamBroken`` names the fault): one ``message_start``;
each content block started once, at an index of its own (a whole number), then
deltas of its kind until its ``content_block_stop``; a ``tool_use`` block with a
name and an id (a string) no other block of the message has; nothing after
``message_stop`` (a block still open then ends with the message, as its own
stop would have ended it). So a block is never replaced, a call never goes back
without an id, and a delta never lands in a block it is not for.
"""

from __future__ import annotations

import json
import reprlib
from typing import Any

from chimera.core.providers.base import (
    Message,
    ModelChunk,
    ModelDone,
    TextChunk,
    ThinkingChunk,
    Usage,
)
from chimera.core.providers.pricing import cost_of
from chimera.core.strict_json import TOO_DEEP, SurrogateJoiner, clean_json

__all__ = ["MAX_TOKEN_COUNT", "MessageBuilder", "StreamBroken"]

# The deltas of each kind of block Chimera knows; a block of another kind (a server tool's) takes any.
_DELTAS_OF = {
    "text": frozenset({"text_delta", "citations_delta"}),
    "thinking": frozenset({"thinking_delta", "signature_delta"}),
    "redacted_thinking": frozenset[str](),
    "tool_use": frozenset({"input_json_delta"}),
}
_SHOWN = reprlib.Repr()  # a value of the server's quoted in an error: cut short
_SHOWN.maxstring, _SHOWN.maxother, _SHOWN.maxlevel = 40, 40, 1


class StreamBroken(ValueError):
    """The stream breaks the Messages API's rules for a message's blocks; the message says how, for a person."""


class MessageBuilder:
    """Assembles an assistant message from raw stream events (as JSON dicts).

    The model's output is untrusted: streamed text and thinking go out as clean text (a
    surrogate pair split across two deltas is joined, a lone surrogate becomes U+FFFD),
    and the finished message holds only what strict JSON can carry (see ``strict_json``).
    """

    def __init__(self) -> None:
        self.blocks: dict[int, dict[str, Any]] = {}
        self.open: set[int] = set()  # blocks started and not stopped yet
        self.call_ids: dict[str, int] = {}  # each tool_use id, and its block
        self.partial_json: dict[int, list[str]] = {}
        self.joiners: dict[int, SurrogateJoiner] = {}
        self.stop_reason = ""
        self.input_tokens = 0
        self.output_tokens = 0
        self.cache_read = 0
        self.cache_write = 0
        self.started = False
        self.stopped = False

    def feed(self, event: dict[str, Any]) -> ModelChunk | None:
        """What ``event`` adds to the message, if anything to show now. StreamBroken when it breaks the
        stream's rules (see above); KeyError, TypeError or AttributeError when it lacks what its kind carries."""
        kind = event.get("type")
        if kind == "ping":
            return None
        if self.stopped:
            raise StreamBroken(f"{_SHOWN.repr(kind)} after message_stop")
        if kind == "message_start":
            if self.started:
                raise StreamBroken("a second message_start")
            self.started = True
            self._usage(event.get("message", {}).get("usage") or {})
        elif kind == "content_block_start":
            index = _index(event)
            if index in self.blocks:
                raise StreamBroken(f"content block {index} started twice")
            self.blocks[index] = self._block(index, event["content_block"])
            self.open.add(index)
        elif kind == "content_block_delta":
            index = self._open(_index(event), "delta")
            return self._delta(index, event["delta"])
        elif kind == "content_block_stop":
            return self._stop(self._open(_index(event), "stop"))
        elif kind == "message_delta":
            self.stop_reason = (event.get("delta") or {}).get("stop_reason") or self.stop_reason
            self._usage(event.get("usage") or {})
        elif kind == "message_stop":
            for index in sorted(self.open):  # a server that never stopped a block: it ends with the message
                self._stop(index)
            self.stopped = True
        return None

    def _stop(self, index: int) -> ModelChunk | None:
        """Close block ``index``: a call's input is parsed; what its text held back goes out."""
        self.open.discard(index)
        if index in self.partial_json:
            raw = "".join(self.partial_json.pop(index))
            self.blocks[index]["input"] = _parse_tool_input(raw, self.blocks[index])
        joiner = self.joiners.pop(index, None)
        held = joiner.flush() if joiner is not None else ""
        if held:  # a high surrogate whose pair never came
            is_thinking = self.blocks[index]["type"] == "thinking"
            return ThinkingChunk(held) if is_thinking else TextChunk(held)
        return None

    def _block(self, index: int, given: object) -> dict[str, Any]:
        """The block a ``content_block_start`` at ``index`` begins, checked."""
        if not isinstance(given, dict) or not isinstance(given.get("type"), str):
            raise StreamBroken(f"content block {index} is not an object with a type")
        block = dict(given)
        if block["type"] == "tool_use":
            call_id, name = block.get("id"), block.get("name")
            if not isinstance(call_id, str) or not call_id:
                raise StreamBroken(f"its tool_use block {index} has no id")
            if not isinstance(name, str) or not name:
                raise StreamBroken(f"its tool_use block {index} has no name")
            if call_id in self.call_ids:
                first = self.call_ids[call_id]
                raise StreamBroken(f"its tool_use blocks {first} and {index} have the same id {_SHOWN.repr(call_id)}")
            self.call_ids[call_id] = index
            self.partial_json[index] = []
        return block

    def _open(self, index: int, what: str) -> int:
        """``index``, when its block has started and not stopped; StreamBroken naming which it is not."""
        if index not in self.blocks:
            raise StreamBroken(f"content block {index} got a {what} before it started")
        if index not in self.open:
            raise StreamBroken(f"content block {index} got a {what} after it stopped")
        return index

    def _delta(self, index: int, delta: dict[str, Any]) -> ModelChunk | None:
        block = self.blocks[index]
        kind = delta.get("type")
        allowed = _DELTAS_OF.get(block["type"])
        if allowed is not None and kind not in allowed and any(kind in kinds for kinds in _DELTAS_OF.values()):
            raise StreamBroken(f"a {kind} for content block {index}, a {block['type']} block")
        if kind in ("text_delta", "thinking_delta"):
            field = "text" if kind == "text_delta" else "thinking"
            piece = delta[field]
            block[field] = block.get(field, "") + piece  # cleaned whole in done(), where pairs join the same way
            shown = self.joiners.setdefault(index, SurrogateJoiner()).feed(piece)
            if not shown:
                return None
            return TextChunk(shown) if field == "text" else ThinkingChunk(shown)
        if kind == "signature_delta":
            block["signature"] = block.get("signature", "") + delta["signature"]
        elif kind == "input_json_delta":
            self.partial_json.setdefault(index, []).append(delta.get("partial_json", ""))
        elif kind == "citations_delta":
            block.setdefault("citations", []).append(delta["citation"])
        return None

    def _usage(self, usage: Any) -> None:
        """Take the counts of a ``usage`` object; a count that is not a sound whole number is ignored."""
        if not isinstance(usage, dict):
            return
        self.input_tokens = _token_count(usage.get("input_tokens")) or self.input_tokens
        self.output_tokens = _token_count(usage.get("output_tokens")) or self.output_tokens
        self.cache_read = _token_count(usage.get("cache_read_input_tokens")) or self.cache_read
        self.cache_write = _token_count(usage.get("cache_creation_input_tokens")) or self.cache_write

    def done(self, model: str) -> ModelDone:
        # Strict JSON only: a pair split across deltas joined, lone surrogates as U+FFFD, NaN and
        # infinities as null. A thinking block changes only if its text held a lone surrogate, which
        # could not be sent back as UTF-8 anyway; its signature then no longer matches, and a server
        # that checks it answers 400 (not retried) instead of every request failing to encode.
        content = [clean_json(_clean_block(self.blocks[i])) for i in sorted(self.blocks)]
        message: Message = {"role": "assistant", "content": content}
        usage = Usage(
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
            cost=cost_of(
                model,
                input_tokens=self.input_tokens,
                output_tokens=self.output_tokens,
                cache_read_tokens=self.cache_read,
                cache_write_tokens=self.cache_write,
            ),
        )
        return ModelDone(message=message, stop_reason=self.stop_reason or "end_turn", usage=usage)


MAX_TOKEN_COUNT = 10**9
"""More tokens than any model reads or writes in one response: a larger count is nonsense."""


def _token_count(value: Any) -> int | None:
    """``value`` as a token count, or None when it is not one: negative, fractional, non-finite, huge, not a number.

    The server is untrusted (a local one may be buggy or hostile): whatever it sends, the totals
    built from these counts stay finite, non-negative whole numbers.
    """
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        value = int(value)  # a whole count sent in quotes reads as the number, as the SDK's own types read it
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if isinstance(value, float) and not value.is_integer():  # NaN and infinities are not whole either
        return None
    count = int(value)
    return count if 0 <= count <= MAX_TOKEN_COUNT else None


def _index(event: dict[str, Any]) -> int:
    """The block index an event names: a whole number from 0 (never a bool, a float or text that reads as one)."""
    index = event["index"]
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise StreamBroken(f"a content block index that is not a whole number from 0: {_SHOWN.repr(index)}")
    return index


def _parse_tool_input(raw: str, block: dict[str, Any]) -> Any:
    if not raw.strip():
        return block.get("input") or {}
    try:
        return clean_json(json.loads(raw))  # NaN, Infinity and 1e400 parse, but become null
    except RecursionError:  # nested past the parser's depth: far past MAX_DEPTH
        return {TOO_DEEP: True}
    except ValueError:  # not JSON, or an integer past Python's digit limit
        # Kept as text so the executor can tell the model its call was malformed.
        return {"__invalid_json__": raw}


def _clean_block(block: dict[str, Any]) -> dict[str, Any]:
    """Drop the null fields the SDK adds, so the block goes back as the server sent it."""
    kind = block.get("type")
    if kind == "text":
        out: dict[str, Any] = {"type": "text", "text": block.get("text", "")}
        if block.get("citations"):
            out["citations"] = block["citations"]
        return out
    if kind == "thinking":
        return {
            "type": "thinking",
            "thinking": block.get("thinking", ""),
            "signature": block.get("signature", ""),
        }
    if kind == "redacted_thinking":
        return {"type": "redacted_thinking", "data": block.get("data", "")}
    if kind == "tool_use":
        return {"type": "tool_use", "id": block["id"], "name": block["name"], "input": block.get("input", {})}
    return {k: v for k, v in block.items() if v is not None}
