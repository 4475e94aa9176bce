"""Provides ``Context``, the conversation as a value.

A ``Context`` is the list of messages the model is sent and the session node
they stand at. It is a value: :meth:`Context.fork` gives an independent copy,
so several can exist at once (TreeOfThought's candidates, branch-and-compare).
Messages are never changed in place, so a fork shares them safely. Neighbouring
user messages are merged as they are added (``messages.merged_into``), for the
loop as it runs and for a conversation rebuilt from the session tree alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chimera.core.messages import Prompt, content_blocks, merged_into
from chimera.core.providers.base import Message

__all__ = ["Context"]


@dataclass(slots=True)
class Context:
    """The messages the model is sent, and the session node they stand at (None before the first).

    ``starts`` says, for each message, the session node it starts at (None when unknown: no
    session, or messages given without their nodes); compaction keeps a tail from there.
    """

    messages: list[Message] = field(default_factory=list)
    node_id: str | None = None
    starts: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        if len(self.starts) != len(self.messages):
            self.starts = [None] * len(self.messages)

    @classmethod
    def of(cls, messages: Iterable[Message], node_id: str | None = None) -> Context:
        """A context from messages as a session keeps them (one per node): user turns are merged."""
        return cls.along(((message, None) for message in messages), node_id)

    @classmethod
    def along(cls, nodes: Iterable[tuple[Message, str | None]], node_id: str | None = None) -> Context:
        """A context from messages and the nodes that keep them, in order; it stands at ``node_id``."""
        context = cls()
        for message, node in nodes:
            context.add(message, node)
        context.node_id = node_id
        return context

    def add(self, message: Message, node_id: str | None = None) -> None:
        """Add ``message`` (kept at session node ``node_id``, when there is a session)."""
        last = self.last
        if last is None or not last["role"] == message["role"] == "user":
            self.starts.append(node_id)
        merged_into(self.messages, message)
        if node_id is not None:
            self.node_id = node_id

    def ends_with(self, blocks: list[dict[str, Any]]) -> bool:
        """Whether the last message is the person's and ends with ``blocks`` (compared by value; none: True)."""
        last = self.last
        if not blocks:
            return True
        if last is None or last.get("role") != "user":
            return False
        held = content_blocks(last.get("content"))
        return len(held) >= len(blocks) and held[len(held) - len(blocks) :] == blocks

    def drop_end(self, count: int) -> None:
        """Take the last ``count`` content blocks off the last message (words no answer followed); a message left
        with none goes, with its start. The node the context stands at does not move. Check :meth:`ends_with`
        first: this takes whatever blocks are there."""
        if count <= 0 or self.last is None:
            return
        kept = content_blocks(self.last.get("content"))[:-count]
        if kept:
            self.messages[-1] = {"role": "user", "content": kept}
        else:
            self.messages.pop()
            self.starts.pop()

    def fork(self) -> Context:
        """An independent copy: what is added to one is not in the other."""
        return Context(list(self.messages), self.node_id, list(self.starts))

    @property
    def last(self) -> Message | None:
        return self.messages[-1] if self.messages else None

    def split_prompt(self) -> tuple[Context, Prompt]:
        """The conversation before the person's last message, and that message: what a run answers."""
        last = self.last
        if last is None or last.get("role") != "user":
            raise ValueError("a context to run must end with the person's message: add the task as a user message")
        return Context(self.messages[:-1], self.node_id, self.starts[:-1]), last["content"]
