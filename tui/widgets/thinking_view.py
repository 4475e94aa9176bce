"""Provides ``ThinkingView``: the model's thinking, dimmed, as it streams."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from chimera.core.terminal_text import terminal_safe

__all__ = ["ThinkingView"]


class ThinkingView(Static):
    """Thinking text in a quiet style, so the answer stands out."""

    DEFAULT_CSS = """
    ThinkingView {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1 0 2;
        color: $text-muted;
        text-style: italic;
    }
    """

    def __init__(self) -> None:
        super().__init__("")
        self._parts: list[str] = []

    @property
    def text(self) -> str:
        return "".join(self._parts)

    async def append(self, fragment: str) -> None:
        self._parts.append(fragment)
        self.update(Text.assemble(("✻ ", "bold"), terminal_safe(self.text)))

    async def finish(self) -> None:
        """Thinking is already static; nothing to freeze."""

    async def discard(self) -> None:
        await self.remove()
