"""Provides ``PromptInput``: where the person types tasks (and, later, steering and commands)."""

from __future__ import annotations

from textual.widgets import Input

__all__ = ["PromptInput"]


class PromptInput(Input):
    """A one-line input for the next task."""

    DEFAULT_CSS = """
    PromptInput {
        border: tall $primary 40%;
        background: $surface;
    }
    PromptInput:focus {
        border: tall $primary;
    }
    """

    def __init__(self) -> None:
        super().__init__(placeholder="Tell Chimera what to do…   (enter sends · ctrl+q quits)", id="prompt")
