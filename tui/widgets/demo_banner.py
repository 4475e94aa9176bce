"""Provides ``DemoBanner``: the line at the top that says the workbench is playing its demo.

It opens with the whole notice; once the demo starts it folds to one line
(the whole notice is also the conversation's first entry, so nothing is lost),
and a click opens or folds it again.
"""

from __future__ import annotations

from textual.reactive import reactive
from textual.widgets import Static

from chimera.core.demo import DEMO_NOTICE

__all__ = ["DEMO_LINE", "DemoBanner"]

# The folded line, short enough to show whole at 80 columns (the banner's border and padding leave 77); the
# whole notice says the rest (a copy of a sample project, a local server).
DEMO_LINE = "Demo mode: a recorded session replays · set ANTHROPIC_API_KEY to use a model"


class DemoBanner(Static):
    """The demo's notice, whole or folded to one line."""

    DEFAULT_CSS = """
    DemoBanner.-folded {
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    folded: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(DEMO_NOTICE, id=id, markup=False)
        self.tooltip = "Click to show or fold the whole notice"

    def watch_folded(self, folded: bool) -> None:
        self.set_class(folded, "-folded")
        self.update(DEMO_LINE if folded else DEMO_NOTICE)

    def on_click(self) -> None:
        self.folded = not self.folded
