"""Provides compaction: the older part of a conversation summarized, so a long session fits the model's window.

:func:`cut` splits a context in two: the older part, which the model
summarizes, and a recent tail kept as it is. The tail starts at an assistant
message, so a tool call always stays with its results. :func:`transcript` is
the older part as text for the summary request (long outputs cut in the
middle), and :func:`summary_message` the message that stands for it from then
on: the task and the person's later words verbatim, what the strategy asked to
keep (the plan), then the model's summary. Each is a text block of its own, so
a later compaction finds the task and the person's words again.

The loop's side, asking for the summary and putting it in place, is
``loops.compactor``; the loop decides when (``AgentLoop.compact``): past
``auto_compact_threshold`` of the window, on a "prompt is too long" answer, or
by hand.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from chimera.core.context import Context
from chimera.core.messages import COMPACTION_HEADER, SUMMARY_PREFIX, content_blocks, is_reminder, steering_text
from chimera.core.providers.base import Message

__all__ = [
    "SUMMARY_SYSTEM",
    "Compaction",
    "Cut",
    "cut",
    "request_budget",
    "size",
    "summary_message",
    "summary_prompt",
    "transcript",
]

SUMMARY_SYSTEM = (
    "You write the summary a coding agent continues its work from. It will not see the conversation "
    "again, only your summary and the most recent messages."
)
_ASK = """Summarize the conversation above for the agent that continues it. Cover:
1. what the person asked for, and every later request or correction;
2. what was done: files read, created or changed (with their paths) and why, commands run and what they showed;
3. errors met, how they were resolved, and what still fails;
4. where the work stands now, and the next steps.
Be concrete: paths, names, numbers, exact error messages. Answer with the summary only; call no tools."""
_TASK = "The task, in the person's words:\n"
_SAID = "Later, the person said:\n"
_NOW = "What the loop asked for last, still in force:\n"  # a strategy's instruction (plan first, this step)
_MAX_TASK = 10_000  # characters of the task kept verbatim
_MAX_SAID = 2_000  # characters of each later message kept
_SAID_KEPT = 10  # later messages kept, the most recent


@dataclass(frozen=True, slots=True)
class Compaction:
    """How a conversation is compacted.

    Args:
        keep: the share of the conversation (by size) kept as it is at its end; at least the
            last assistant message and its results are always kept.
        summary_tokens: the output limit of the summary request (at most a quarter of the window).
        max_block: characters of one message part (a tool's output, a file) in the transcript
            sent to be summarized; longer ones are cut in the middle.
    """

    keep: float = 0.3
    summary_tokens: int = 4_000
    max_block: int = 4_000


@dataclass(frozen=True, slots=True)
class Cut:
    """A context split for compaction: ``older`` is summarized, ``kept`` stays as it is.

    ``kept_from`` is the session node the kept part starts at (None without a session, or
    when nothing is kept); ``kept_starts`` the node each kept message starts at.
    """

    older: list[Message]
    kept: list[Message]
    kept_from: str | None
    kept_starts: list[str | None]


_OVERHEAD = 1_024  # tokens: the summary request's own words and framing, with room to spare


def request_budget(window: int, policy: Compaction) -> tuple[int, int]:
    """What a summary request may use in a model's ``window`` (tokens): its output limit in tokens,
    and the characters of transcript it sends (two a token: even dense text fits)."""
    output = min(policy.summary_tokens, window // 4)
    return output, max(1_000, (window - output - _OVERHEAD) * 2)


def size(message: Message) -> int:
    """How big ``message`` is, in characters of JSON (a stand-in for tokens, in proportion)."""
    return len(json.dumps(message.get("content"), ensure_ascii=False))


def cut(context: Context, policy: Compaction) -> Cut | None:
    """Where to split ``context``; None when there is nothing older than the kept part to summarize."""
    messages = context.messages
    assistants = [index for index, message in enumerate(messages) if message["role"] == "assistant"]
    if not assistants:
        return None
    sizes = [size(message) for message in messages]
    budget = sum(sizes) * policy.keep
    start, kept = len(messages), 0
    while start > 0 and kept + sizes[start - 1] <= budget:
        start -= 1
        kept += sizes[start]
    start = min(start, assistants[-1])  # at least the last answer and its results
    start = next(index for index in assistants if index >= start)  # a call never parted from its results
    if start <= 1:  # only the task before it: nothing to summarize
        return None
    starts = context.starts
    return Cut(messages[:start], messages[start:], starts[start], starts[start:])


def person_words(messages: Iterable[Message]) -> tuple[str, list[str], dict[str, str]]:
    """The task (the person's first message), what the person said after it, as they said it, and
    what an earlier compaction kept (by title).

    Steering counts as the person's; a summary from an earlier compaction gives back the task, the
    words and what it kept. Only the blocks of a summary (after its header) are read as its parts:
    the person's own words are theirs, however they begin.
    """
    task: str | None = None
    said: list[str] = []
    kept: dict[str, str] = {}
    for message in messages:
        if message["role"] != "user":
            continue
        in_summary = False
        for block in content_blocks(message.get("content")):
            if block.get("type") != "text":
                continue
            text = str(block.get("text", ""))
            words: list[str] = []
            if is_reminder(block):
                steered = steering_text(block)
                if steered is not None:
                    words.append(steered)
            elif text == COMPACTION_HEADER:
                in_summary = True
            elif in_summary and text.startswith(_TASK) and task is None:
                task = text.removeprefix(_TASK)
            elif in_summary and text.startswith(_SAID):
                said.append(text.removeprefix(_SAID))
            elif in_summary and text.startswith(_NOW):
                pass  # the loop says it again while it still holds (see ``summary_message``)
            elif in_summary and text.startswith(SUMMARY_PREFIX):
                in_summary = False  # the summary itself is in the transcript; what follows is the person's
            elif in_summary:
                title, _, kept_text = text.partition(":\n")
                kept[title] = kept_text
            elif text.strip():
                words.append(text)
            for word in words:
                if task is None:
                    task = word
                else:
                    said.append(word)
    return task or "", said, kept


def summary_prompt(older: list[Message], focus: str, limit: int, max_block: int) -> str:
    """The request for a summary of ``older``: its transcript (at most ``limit`` characters), then what to cover."""
    ask = _ASK if not focus.strip() else f"{_ASK}\nPay particular attention to: {focus.strip()}"
    return f"<conversation>\n{transcript(older, limit, max_block)}\n</conversation>\n\n{ask}"


def transcript(messages: Iterable[Message], limit: int, max_block: int) -> str:
    """``messages`` as plain text, each part at most ``max_block`` characters, the whole at most ``limit``."""
    lines: list[str] = []
    names: dict[str, str] = {}
    for message in messages:
        for block in content_blocks(message.get("content")):
            line = _line(message["role"], block, names)
            if line:
                lines.append(_middle(line, max_block))
    return _middle("\n\n".join(lines), limit)


def _line(role: str, block: dict[str, Any], names: dict[str, str]) -> str:
    kind = block.get("type")
    if kind == "text":
        who = "note" if is_reminder(block) else ("person" if role == "user" else "agent")
        return f"[{who}] {block.get('text', '')}"
    if kind == "thinking":
        return f"[agent thinking] {block.get('thinking', '')}"
    if kind == "tool_use":
        names[str(block.get("id"))] = str(block.get("name"))
        return f"[tool call: {block.get('name')}] {json.dumps(block.get('input'), ensure_ascii=False)}"
    if kind == "tool_result":
        name = names.get(str(block.get("tool_use_id")), "tool")
        failed = " (failed)" if block.get("is_error") else ""
        output = "\n".join(b.get("text", "") for b in content_blocks(block.get("content")) if b.get("type") == "text")
        return f"[{name} result{failed}] {output}"
    return ""


def _middle(text: str, limit: int) -> str:
    """``text`` cut in the middle to ``limit`` characters, saying how much went."""
    if len(text) <= limit:
        return text
    head = limit * 3 // 10
    tail = limit - head
    return f"{text[:head]}\n[… {len(text) - limit} characters left out …]\n{text[len(text) - tail :]}"


def summary_message(
    summary: str, older: list[Message], remembered: Mapping[str, str], instruction: str = ""
) -> Message:
    """The message that stands for ``older`` from now on: the person's words, what was to be kept
    (``remembered``, and what an earlier compaction kept that it does not replace), the loop's
    ``instruction`` for what it is doing now (when it was in ``older``), the summary."""
    task, said, kept = person_words(older)
    blocks = [COMPACTION_HEADER]
    if task:
        blocks.append(_TASK + _middle(task, _MAX_TASK))
    blocks += [_SAID + _middle(words, _MAX_SAID) for words in said[-_SAID_KEPT:]]
    blocks += [f"{title}:\n{text}" for title, text in (kept | dict(remembered)).items()]
    if instruction:
        blocks.append(_NOW + instruction)
    blocks.append(SUMMARY_PREFIX + summary)
    return {"role": "user", "content": [{"type": "text", "text": text} for text in blocks]}
