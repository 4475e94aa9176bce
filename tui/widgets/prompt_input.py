"""Provides ``PromptInput``: where the person types tasks, steering, follow-ups and commands."""

from __future__ import annotations

from typing import ClassVar

from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Input

from chimera.core.terminal_text import is_blank

__all__ = ["PromptInput"]


class PromptInput(Input):
    """A one-line input: ``enter`` sends (steers a run that is going), ``tab`` queues a follow-up."""

    DEFAULT_CSS = """
    PromptInput {
        border: tall $primary 40%;
        background: $surface;
    }
    PromptInput:focus {
        border: tall $primary;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("tab", "queue", "Queue", show=False)]

    class Queued(Message):
        """The person asked for the text to wait for the run going (``tab``)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self) -> None:
        super().__init__(
            placeholder="Tell Chimera what to do…  (enter sends · tab queues · ctrl+q quits)",
            id="prompt",
        )

    def action_queue(self) -> None:
        if not is_blank(self.value):
            self.post_message(self.Queued(self.value.strip()))
        else:
            self.screen.focus_next()
