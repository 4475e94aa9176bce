"""Provides ``StatusLine``: model, strategy, turn, tokens, cost, permission mode and state."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

__all__ = ["StatusLine"]


class StatusLine(Static):
    """One line at the bottom of the screen that says where the run stands."""

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
    }
    """

    model: reactive[str] = reactive("")
    loop: reactive[str] = reactive("react")
    mode: reactive[str] = reactive("ask")
    turn: reactive[int] = reactive(0)
    input_tokens: reactive[int] = reactive(0)
    output_tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    state: reactive[str] = reactive("idle")

    def render(self) -> Text:
        state_style = {"running": "bold $accent", "failed": "bold red", "done": "green"}.get(self.state, "")
        parts: list[tuple[str, str] | str] = [
            (self.state, state_style.replace("$accent", "yellow")),
            "  ·  ",
            (self.model, "bold"),
            f"  ·  {self.loop}  ·  turn {self.turn}",
            f"  ·  {_tokens(self.input_tokens)} in / {_tokens(self.output_tokens)} out",
            f"  ·  ${self.cost:.4f}",
            f"  ·  {self.mode}",
        ]
        return Text.assemble(*parts)


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)
