"""Provides ``Conversation``: the scrolling record of a session, built from bus events.

It reads step events in batches (one batch a frame) and turns them into
widgets: the person's task, thinking, the streamed answer, tool calls with
their results, retries and the end of a run. Runs of text deltas in a batch
are joined before they reach the Markdown stream.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget

from chimera.core.events import (
    MessageCompleted,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from chimera.tui.widgets.assistant_message import AssistantMessage
from chimera.tui.widgets.notice import Notice
from chimera.tui.widgets.thinking_view import ThinkingView
from chimera.tui.widgets.tool_call_view import ToolCallView
from chimera.tui.widgets.user_message import UserMessage

__all__ = ["Conversation"]


def _coalesce(events: Iterable[StepEvent]) -> list[StepEvent | tuple[str, str]]:
    """Join neighbouring text (or thinking) deltas into ``("text"|"thinking", joined)`` items."""
    out: list[StepEvent | tuple[str, str]] = []
    for event in events:
        kind = "text" if isinstance(event, TextDelta) else "thinking" if isinstance(event, ThinkingDelta) else ""
        if kind:
            text = event.text  # type: ignore[attr-defined]
            last = out[-1] if out else None
            if isinstance(last, tuple) and last[0] == kind:
                out[-1] = (kind, last[1] + text)
            else:
                out.append((kind, text))
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
        self._answer: AssistantMessage | None = None
        self._thinking: ThinkingView | None = None
        self._calls: dict[str, ToolCallView] = {}

    def on_mount(self) -> None:
        self.anchor()

    async def add(self, widget: Widget) -> None:
        await self.mount(widget)

    async def handle(self, events: Iterable[StepEvent]) -> None:
        """Show a batch of events, in order."""
        for item in _coalesce(events):
            match item:
                case ("text", text):
                    await self._append_text(text)
                case ("thinking", text):
                    await self._append_thinking(text)
                case RunStarted(task=task):
                    await self.mount(UserMessage(task))
                case MessageCompleted():
                    await self._close_message()
                case RetryScheduled(reason=reason, attempt=attempt, wait_s=wait):
                    await self._discard_partial()
                    if reason == "max_tokens":
                        await self.mount(Notice("↻ the answer hit the output limit; continuing", "warning"))
                    else:
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
                    await self._close_message()
                    if success:
                        await self.mount(Notice(f"✓ done in {steps} turns · ${cost:.4f}", "success"))
                    else:
                        await self.mount(Notice(f"✗ the run stopped ({reason}): {error}", "error"))
                case _:
                    pass

    async def _append_text(self, text: str) -> None:
        if self._answer is None:
            self._thinking = None
            self._answer = AssistantMessage()
            await self.mount(self._answer)
        await self._answer.append(text)

    async def _append_thinking(self, text: str) -> None:
        if self._thinking is None:
            self._thinking = ThinkingView()
            await self.mount(self._thinking)
        self._thinking.append(text)

    async def _close_message(self) -> None:
        if self._answer is not None:
            await self._answer.finish()
        self._answer = None
        self._thinking = None

    async def _discard_partial(self) -> None:
        """A failed attempt's output is void: take it off the screen."""
        for widget in (self._answer, self._thinking):
            if widget is not None:
                await widget.remove()
        self._answer = None
        self._thinking = None
