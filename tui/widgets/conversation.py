"""Provides ``Conversation``: the scrolling record of a session, built from bus events.

It reads step events in batches (one batch a frame) and turns them into
widgets: the person's task, thinking, the streamed answer, tool calls with
their results, retries and the end of a run. Runs of text deltas in a batch
are joined before they reach the Markdown stream.

What one model request streams (thinking and text) belongs to an *attempt*
until ``message_completed`` seals it. A retry that voids the attempt, or a run
that fails before the message completes, takes the attempt off the screen: a
partial message is never left looking like an answer.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget

from chimera.core.events import (
    CompactionDone,
    MessageCompleted,
    PlanSuggested,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from chimera.core.loops.context import is_loop_note, prompt_text
from chimera.core.sessions.tree import Node
from chimera.core.wording import describe_compaction, plural
from chimera.tui.widgets.assistant_message import AssistantMessage
from chimera.tui.widgets.notice import Notice
from chimera.tui.widgets.thinking_view import ThinkingView
from chimera.tui.widgets.tool_call_view import ToolCallView
from chimera.tui.widgets.user_message import UserMessage

__all__ = ["Conversation"]

Item = StepEvent | tuple[str, str]


def _coalesce(events: Iterable[StepEvent]) -> list[Item]:
    """Join neighbouring text (or thinking) deltas into ``("text"|"thinking", joined)`` items."""
    out: list[Item] = []
    for event in events:
        if isinstance(event, TextDelta | ThinkingDelta):
            kind = "text" if isinstance(event, TextDelta) else "thinking"
            last = out[-1] if out else None
            if isinstance(last, tuple) and last[0] == kind:
                out[-1] = (kind, last[1] + event.text)
            else:
                out.append((kind, event.text))
        else:
            out.append(event)
    return out


class Conversation(VerticalScroll):
    """The conversation pane."""

    DEFAULT_CSS = """
    Conversation {
        height: 1fr;
        padding: 0 1 1 0;
        scrollbar-size-vertical: 1;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._attempt: list[ThinkingView | AssistantMessage] = []
        self._calls: dict[str, ToolCallView] = {}

    def on_mount(self) -> None:
        self.anchor()

    async def handle(self, events: Iterable[StepEvent]) -> None:
        """Show a batch of events, in order."""
        for item in _coalesce(events):
            await self._show(item)

    async def _show(self, item: Item) -> None:
        match item:
            case ("text", text):
                await self._stream_into(AssistantMessage, text)
            case ("thinking", text):
                await self._stream_into(ThinkingView, text)
            case RunStarted(task=task, notes=notes):
                await self.mount(UserMessage(task if isinstance(task, str) else prompt_text(task)))
                for note in notes:
                    await self.mount(Notice(note, "warning"))
            case PlanSuggested(reason=reason):
                await self.mount(Notice(f"Tip: {reason}.", "info"))
            case CompactionDone():
                line = describe_compaction(item.reason, item.tokens_before, item.tokens_after)
                await self.mount(Notice(f"⇣ {line}", "info"))
            case MessageCompleted():
                await self._seal_attempt()
            case RetryScheduled(reason="max_tokens"):
                await self._seal_attempt()
                await self.mount(Notice("↻ the answer hit the output limit; continuing", "warning"))
            case RetryScheduled(reason=reason, attempt=attempt, wait_s=wait):
                await self._discard_attempt()
                await self.mount(Notice(f"↻ {reason}: retry {attempt} in {wait:.1f}s", "warning"))
            case ToolCallStarted(call_id=call_id, name=name, args=args):
                view = ToolCallView(call_id, name, args)
                self._calls[call_id] = view
                await self.mount(view)
            case ToolCallFinished(call_id=call_id, output=output, is_error=is_error, duration_ms=ms, data=data):
                finished = self._calls.pop(call_id, None)
                if finished is not None:
                    finished.finish(output, is_error=is_error, duration_ms=ms, data=data)
            case RunFinished(success=success, reason=reason, error=error, steps=steps, cost=cost):
                if success:
                    await self._seal_attempt()
                    await self.mount(Notice(f"✓ done in {plural(steps, 'turn')} · ${cost:.4f}", "success"))
                elif reason == "interrupted":  # the person's own doing: said once, not as a failure
                    await self._discard_attempt()
                    await self.mount(Notice("⏹ interrupted", "warning"))
                else:
                    await self._discard_attempt()
                    await self.mount(Notice(f"✗ the run stopped ({reason}): {error}", "error"))
            case _:
                pass

    async def show_history(self, nodes: Sequence[Node], *, limit: int = 60) -> None:
        """Show a resumed session's earlier turns (the last ``limit`` nodes), already complete."""
        shown = list(nodes)[-limit:]
        if len(shown) < len(nodes):
            await self.mount(Notice(f"… {len(nodes) - len(shown)} earlier entries (chimera export shows them all)"))
        results = {
            block["tool_use_id"]: block
            for node in shown
            if node.kind == "tool_result"
            for block in node.message.get("content", [])
            if block.get("type") == "tool_result"
        }
        widgets: list[Widget] = []
        for node in shown:
            content = node.message.get("content")
            if node.kind == "user" and not is_loop_note(node.message):
                text = (
                    content
                    if isinstance(content, str)
                    else " ".join(b.get("text", "") for b in content or [] if b.get("type") == "text")
                )
                widgets.append(UserMessage(text))
            elif node.kind == "assistant":
                widgets += self._finished_turn(content or [], results)
            elif node.kind == "compaction":
                widgets.append(Notice("⇣ the conversation before this point was compacted into a summary", "info"))
        await self.mount_all(widgets)

    def _finished_turn(self, blocks: list[dict[str, Any]], results: dict[str, dict[str, Any]]) -> list[Widget]:
        widgets: list[Widget] = []
        for block in blocks:
            if block.get("type") == "text" and block.get("text", "").strip():
                widgets.append(AssistantMessage(block["text"]))
            elif block.get("type") == "tool_use":
                view = ToolCallView(block["id"], block["name"], block.get("input") or {})
                result = results.get(block["id"])
                if result is not None:
                    output = result.get("content")
                    text = output if isinstance(output, str) else json.dumps(output)
                    view.finish(text, is_error=bool(result.get("is_error")), duration_ms=None, data={})
                widgets.append(view)
        return widgets

    async def _stream_into(self, kind: type[ThinkingView] | type[AssistantMessage], text: str) -> None:
        """Append to the attempt's last widget when it is of ``kind``, else start a new one after it."""
        last = self._attempt[-1] if self._attempt else None
        if not isinstance(last, kind):
            last = kind()
            self._attempt.append(last)
            await self.mount(last)
        await last.append(text)

    async def _seal_attempt(self) -> None:
        for widget in self._attempt:
            await widget.finish()
        self._attempt.clear()

    async def _discard_attempt(self) -> None:
        """A failed attempt's output is void: stop its streams and take it off the screen."""
        for widget in self._attempt:
            await widget.discard()
        self._attempt.clear()
