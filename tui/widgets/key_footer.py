"""Provides ``KeyFooter``: one line at the bottom of the workbench naming the keys that work now.

What it shows comes from ``tui.footer_hints`` (the command registry and the input's keys), asked each time
it draws; too narrow for all of them, the least useful are left out whole. The app redraws it when what
works changes (a run starts or ends).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from chimera.tui.footer_hints import GAP, fit

__all__ = ["KeyFooter"]


class KeyFooter(Static):
    """The keys that work now, each with what it does."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"key-footer--key"}

    DEFAULT_CSS = """
    KeyFooter {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-wrap: nowrap;
    }
    KeyFooter > .key-footer--key { color: $accent; text-style: bold; }
    """

    def __init__(self, hints: Callable[[], Sequence[tuple[str, str]]], *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hints = hints

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-footer--key", partial=True)
        pieces: list[tuple[str, Style] | str] = []
        for key, title in fit(self.hints(), max(1, self.content_region.width or self.size.width)):
            if pieces:
                pieces.append(GAP)
            pieces += [(key, key_style), f" {title.lower()}"]
        return Text.assemble(*pieces)
