"""Provides ``ReplayBar``: one line under a replay saying how it plays and which keys change that."""

from __future__ import annotations

import math
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

__all__ = ["ReplayBar", "speed_name"]

_STATES = {"playing": "▶ playing", "paused": "⏸ paused", "ended": "■ ended", "stopped": "✗ stopped"}


def speed_name(speed: float) -> str:
    return "instant" if math.isinf(speed) else f"{speed:g}×"


class ReplayBar(Static):
    """The replay's state and speed, then its keys; cut with an ellipsis when narrow."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"replay-bar--state", "replay-bar--keys"}

    DEFAULT_CSS = """
    ReplayBar {
        height: 1;
        padding: 0 1;
        background: $boost;
        color: $text-muted;  /* the keys': a part's "auto" colour ($text-muted) is not worked out on the bar */
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    ReplayBar > .replay-bar--state { color: $accent; text-style: bold; }
    """

    state: reactive[str] = reactive("playing")
    speed: reactive[float] = reactive(1.0)

    def render(self) -> Text:
        keys = "p pause/play · s step · 1 2 3 speed 1× 10× instant · q quit"
        if self.state in {"ended", "stopped"}:
            keys = "↑↓ move · enter fold · q quit"
        return Text.assemble(
            (f"{_STATES.get(self.state, self.state)} · {speed_name(self.speed)}", self._style("state")),
            "  ",
            (keys, self._style("keys")),
        )

    def _style(self, part: str) -> Style:
        return self.get_component_rich_style(f"replay-bar--{part}", partial=True)
