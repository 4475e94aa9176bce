"""Provides ``CompletionList``: the completions of a command being typed, shown just above the input.

The input (``PromptInput``) fills it as the text changes (:meth:`CompletionList.show`) and moves
through it (``up``/``down``); ``tab`` takes the highlighted one (:meth:`CompletionList.chosen`). It never
takes focus: the person keeps typing in the input. Hidden when there is nothing to offer.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from chimera.tui.commands import Completion

__all__ = ["CompletionList"]


class CompletionList(OptionList, can_focus=False):
    """The completions, best first; the first highlighted."""

    DEFAULT_CSS = """
    CompletionList {
        display: none;
        height: auto;
        max-height: 8;
        border: none;
        padding: 0 1;
        background: $surface;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    CompletionList.-shown {
        display: block;
    }
    CompletionList > .option-list--option-highlighted {
        color: $text;  /* the theme's text, worked out against the highlight: the help (dim) reads on it */
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.completions: list[Completion] = []

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")

    def show(self, completions: list[Completion], typed: str) -> None:
        """Offer ``completions`` of ``typed``; none, or only what is typed already, hides the list."""
        if not completions or (len(completions) == 1 and completions[0].text.rstrip() == typed.strip()):
            self.hide()
            return
        self.completions = completions
        width = max(len(c.label) for c in completions)
        self.clear_options()
        self.add_options([Option(self._line(c, width)) for c in completions])
        self.highlighted = 0
        self.add_class("-shown")

    def hide(self) -> None:
        self.completions = []
        self.clear_options()
        self.remove_class("-shown")

    def move(self, step: int) -> None:
        if self.completions:
            self.highlighted = ((self.highlighted or 0) + step) % len(self.completions)

    def chosen(self) -> Completion | None:
        """The highlighted completion, if the list is shown."""
        if not self.shown or self.highlighted is None:
            return None
        return self.completions[self.highlighted]

    @staticmethod
    def _line(completion: Completion, width: int) -> Text:
        return Text.assemble((completion.label.ljust(width + 2), "bold"), (completion.help, "dim"))
