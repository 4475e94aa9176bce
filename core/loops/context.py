"""Provides ``Context``, the conversation as a value, and the one place that knows how turns combine.

A ``Context`` is the list of messages the model is sent and the session node
they stand at. It is a value: :meth:`Context.fork` gives an independent copy,
so several can exist at once (TreeOfThought's candidates, branch-and-compare).
Messages are never changed in place, so a fork shares them safely.

The Messages API wants user and assistant turns to alternate; the session keeps
every user message as its own node (a prompt, tool results, a reminder, a
steering message). :func:`merged_into` joins neighbouring user messages, for
the loop as it runs and for a conversation rebuilt from the session tree alike.
The continue prompt (sent after a response cut by the output limit) is
recognised only by :func:`is_continue_prompt`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from chimera.core.providers.base import Message

__all__ = [
    "CONTINUE_PROMPT",
    "REMINDER_OPEN",
    "STEERING_LEAD",
    "Context",
    "Prompt",
    "content_blocks",
    "is_continue_prompt",
    "is_loop_note",
    "is_reminder",
    "joined_text",
    "merged_into",
    "prompt_text",
    "reminder_block",
    "steering_block",
    "steering_text",
]

Prompt = str | list[dict[str, Any]]  # what the person says: text, or content blocks

CONTINUE_PROMPT = "Your last response was cut off by the output limit. Continue exactly where it stopped."
STEERING_LEAD = "The person sent this while you were working. Take it into account, then go on:"
REMINDER_OPEN = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"


def content_blocks(content: Any) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a plain string becomes one text block)."""
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])


def is_continue_prompt(message: Message) -> bool:
    """True for the user message the loop sends after a response cut by the output limit."""
    return message.get("role") == "user" and message.get("content") == CONTINUE_PROMPT


def reminder_block(text: str) -> dict[str, Any]:
    """A reminder as the text block the loop injects after tool results."""
    return {"type": "text", "text": f"{REMINDER_OPEN}{text}{_REMINDER_CLOSE}"}


def steering_block(text: str) -> dict[str, Any]:
    """The person's words sent while the loop worked, as the loop note that delivers them."""
    return reminder_block(f"{STEERING_LEAD}\n\n{text}")


def steering_text(block: dict[str, Any]) -> str | None:
    """The person's words in a block :func:`steering_block` made, or None for any other block."""
    if not is_reminder(block):
        return None
    inner = str(block.get("text", "")).removeprefix(REMINDER_OPEN).removesuffix(_REMINDER_CLOSE)
    return inner.removeprefix(STEERING_LEAD).strip() if inner.startswith(STEERING_LEAD) else None


def is_reminder(block: dict[str, Any]) -> bool:
    """True for the text blocks the loop injects as reminders (not the person's words)."""
    return block.get("type") == "text" and str(block.get("text", "")).startswith(REMINDER_OPEN)


def is_loop_note(message: Message) -> bool:
    """True for a user message the loop wrote itself: the continue prompt, or only reminder blocks
    (a reflection, a plan's next step). It belongs to the run it is in, never starts one."""
    if is_continue_prompt(message):
        return True
    blocks = content_blocks(message.get("content"))
    return message.get("role") == "user" and bool(blocks) and all(is_reminder(b) for b in blocks)


def joined_text(message: Message) -> str:
    """The text blocks of ``message``, joined."""
    return "".join(b.get("text", "") for b in content_blocks(message.get("content")) if b.get("type") == "text")


def prompt_text(content: Any) -> str:
    """The person's words in a prompt: its text blocks, reminders left out."""
    blocks = content_blocks(content)
    return "\n\n".join(b.get("text", "") for b in blocks if b.get("type") == "text" and not is_reminder(b))


def merged_into(messages: list[Message], message: Message) -> None:
    """Append ``message`` to ``messages``, merging it into the last one when both are the user's."""
    last = messages[-1] if messages else None
    if last is not None and last["role"] == message["role"] == "user":
        messages[-1] = {"role": "user", "content": content_blocks(last["content"]) + content_blocks(message["content"])}
    else:
        messages.append(message)


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
