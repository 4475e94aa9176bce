"""Provides the shapes of the messages Chimera writes, and the helpers that make and recognise them.

The loop writes them, the session keeps them, and every reader of a stored
session (``sessions.reading``) tells them apart with these, so the words of a
message are defined in one place: a reminder block (the loop's own note), the
steering block that delivers the person's words sent while the loop worked, the
note that carries the summary of a branch the person left into the path they came to, the
continue prompt sent after a response cut by the output limit, and the blocks a
compaction's message is made of.

The Messages API wants user and assistant turns to alternate; the session keeps
every user message as its own node (a prompt, tool results, a reminder, a
steering message). :func:`merged_into` joins neighbouring user messages, for
the loop as it runs and for a conversation rebuilt from the session tree alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from chimera.core.providers.base import Message

__all__ = [
    "CARRIED_LEAD",
    "COMPACTION_HEADER",
    "CONTINUE_PROMPT",
    "REMINDER_OPEN",
    "STEERING_LEAD",
    "SUMMARY_PREFIX",
    "Prompt",
    "carried_block",
    "carried_text",
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
CARRIED_LEAD = (
    "The person left a branch of this conversation and came back to this earlier point: the files are as they "
    "were here, not as that branch left them. What happened on that branch, summarized:"
)
REMINDER_OPEN = "<system-reminder>"
_REMINDER_CLOSE = "</system-reminder>"
COMPACTION_HEADER = (
    "The conversation so far was compacted to fit the model's context: what came before is summarized "
    "here, and the messages after this one are as they were."
)
SUMMARY_PREFIX = "Summary of the work so far:\n"  # how the model's summary block begins in a compaction


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
    return _note_after(block, STEERING_LEAD)


def carried_block(summary: str) -> dict[str, Any]:
    """The summary of a branch the person left, as the loop note that carries it into the path they came to."""
    return reminder_block(f"{CARRIED_LEAD}\n\n{summary}")


def carried_text(block: dict[str, Any]) -> str | None:
    """The summary in a block :func:`carried_block` made, or None for any other block."""
    return _note_after(block, CARRIED_LEAD)


def _note_after(block: dict[str, Any], lead: str) -> str | None:
    """What follows ``lead`` in a loop note that begins with it, or None for any other block."""
    if not is_reminder(block):
        return None
    inner = str(block.get("text", "")).removeprefix(REMINDER_OPEN).removesuffix(_REMINDER_CLOSE)
    return inner.removeprefix(lead).strip() if inner.startswith(lead) else None


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
