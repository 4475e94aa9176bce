"""Provides ``Notice``: a one-line remark in the conversation (a retry, an error, a result)."""

from __future__ import annotations

from textual.widgets import Static

from chimera.core.terminal_text import terminal_safe

__all__ = ["Notice"]


class Notice(Static):
    """A short line styled by kind: ``-info``, ``-warning`` or ``-error``; what it quotes cannot steer the terminal."""

    DEFAULT_CSS = """
    Notice {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1 0 2;
        color: $text-muted;
    }
    Notice.-warning { color: $warning; }
    Notice.-error { color: $error; text-style: bold; }
    Notice.-success { color: $success; }
    """

    def __init__(self, text: str, kind: str = "info") -> None:
        super().__init__(terminal_safe(text), markup=False, classes=f"-{kind}")
