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
        self._written = 0  # parts handed to the Markdown stream so far
        self._stream: MarkdownStream | None = None
        self.finished = text is not None

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def compose(self) -> ComposeResult:
        yield Static(self._frozen()) if self.finished else Markdown()

    def _frozen(self) -> RichMarkdown:
        return RichMarkdown(terminal_safe(self.text), code_theme="monokai")

    async def on_mount(self) -> None:
        # Text may come, or the message end, before the parts are in place: catch up now.
        if self.finished:
            await self._freeze()
        else:
            await self._flush()

    async def append(self, fragment: str) -> None:
        """Add streamed text to the end of the message."""
        if self.finished or not fragment:
            return
        self._parts.append(fragment)
        await self._flush()

    async def _flush(self) -> None:
        """Hand the Markdown stream what it has not had yet (nothing until the Markdown is mounted)."""
        if self._stream is None:
            found = self.query(Markdown)
            if not found:
                return
            self._stream = Markdown.get_stream(found.first())
        pending = "".join(self._parts[self._written :])
        self._written = len(self._parts)
        if pending:
            await self._stream.write(terminal_safe(pending))

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
        if self.is_mounted:  # else on_mount freezes it (or compose already gives the static form)
            await self._freeze()

    async def _freeze(self) -> None:
        for streaming in self.query(Markdown):
            await streaming.remove()
        if not self.query(Static):
            await self.mount(Static(self._frozen()))

    async def discard(self) -> None:
        """Stop streaming and leave the screen (the attempt that wrote this failed)."""
        self.finished = True
        await self._stop_stream()
        await self.remove()
