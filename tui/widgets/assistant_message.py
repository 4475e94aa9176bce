"""Provides ``AssistantMessage``: the model's answer, streamed as Markdown, then frozen.

While the answer streams, a Textual ``Markdown`` widget takes fragments through
``Markdown.get_stream``. Once the message is complete it becomes one static
Rich renderable: a finished message costs the layout almost nothing, which
keeps long conversations fast. The model's text is drawn with every character
that could steer the terminal shown as an escape (``terminal_safe``).
"""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.widget import Widget
from textual.widgets import Markdown, Static
from textual.widgets.markdown import MarkdownStream

from chimera.core.terminal_text import terminal_safe

__all__ = ["AssistantMessage"]


class AssistantMessage(Widget):
    """One assistant message: ``append`` while it streams, ``finish`` when it is whole."""

    DEFAULT_CSS = """
    AssistantMessage {
        height: auto;
        padding: 0 1 0 2;
        margin: 1 0 0 0;
    }
    AssistantMessage > Markdown {
        margin: 0;
        padding: 0;
        background: transparent;
    }
    AssistantMessage > Static {
        height: auto;
    }
    """

    def __init__(self, text: str | None = None) -> None:
        """A message to stream into, or (with ``text``) one that is already complete."""
        super().__init__()
        self._parts: list[str] = [text] if text is not None else []
        self._stream: MarkdownStream | None = None
        self.finished = text is not None

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def compose(self) -> ComposeResult:
        yield Static(self._frozen()) if self.finished else Markdown()

    def _frozen(self) -> RichMarkdown:
        return RichMarkdown(terminal_safe(self.text), code_theme="monokai")

    async def append(self, fragment: str) -> None:
        """Add streamed text to the end of the message."""
        if self.finished or not fragment:
            return
        self._parts.append(fragment)
        if self._stream is None:
            self._stream = Markdown.get_stream(self.query_one(Markdown))
        await self._stream.write(terminal_safe(fragment))

    async def _stop_stream(self) -> None:
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None

    async def finish(self) -> None:
        """Freeze the message into one static renderable."""
        if self.finished:
            return
        self.finished = True
        await self._stop_stream()
        await self.query_one(Markdown).remove()
        await self.mount(Static(self._frozen()))

    async def discard(self) -> None:
        """Stop streaming and leave the screen (the attempt that wrote this failed)."""
        self.finished = True
        await self._stop_stream()
        await self.remove()
