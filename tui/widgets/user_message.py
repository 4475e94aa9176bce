"""Provides ``UserMessage``: what the person asked, as it appears in the conversation."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from chimera.core.terminal_text import terminal_safe

__all__ = ["UserMessage"]


class UserMessage(Static):
    """The person's message, marked with a prompt sign."""

    DEFAULT_CSS = """
    UserMessage {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
        background: $panel;
        color: $text;
        text-style: bold;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Text.assemble(("› ", "bold"), terminal_safe(text)))  # a resumed session's: untrusted
        self.text = text
