"""Provides ``StatusLine``: one line that shows a ``RunStatus`` (``tui.state.run_status``).

State, model, permission mode, strategy, turn, context, and the session's tokens and cost
(``session:``: every run since the workbench opened). The line draws the status it is
given and nothing else; its fields (``state``, ``model``, ``turn``…) read and write that
status, and :meth:`StatusLine.follow` folds one event into it.
"""

from __future__ import annotations

from typing import ClassVar, Generic, TypeVar

from rich.text import Text
from textual.widgets import Static

from chimera.core.events import StepEvent
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import tokens
from chimera.tui.state.run_status import RunStatus

__all__ = ["StatusLine"]

T = TypeVar("T")


class _Shown(Generic[T]):
    """A field of the status the line shows: read from it; set through it, and the line draws again."""

    def __set_name__(self, owner: type[StatusLine], name: str) -> None:
        self.name = name

    def __get__(self, line: StatusLine, owner: type[StatusLine]) -> T:
        value: T = getattr(line.status, self.name)
        return value

    def __set__(self, line: StatusLine, value: T) -> None:
        setattr(line.status, self.name, value)
        line.refresh()


class StatusLine(Static):
    """One line at the bottom of the screen that says where the run stands."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "status-line--running",
        "status-line--compacting",
        "status-line--done",
        "status-line--failed",
        "status-line--interrupted",
        "status-line--cancelled",
        "status-line--idle",
        "status-line--model",
    }

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    StatusLine > .status-line--running { color: $accent; text-style: bold; }
    StatusLine > .status-line--compacting { color: $accent; text-style: bold; }
    StatusLine > .status-line--done { color: $success; }
    StatusLine > .status-line--failed { color: $error; text-style: bold; }
    StatusLine > .status-line--interrupted { color: $warning; }
    StatusLine > .status-line--cancelled { color: $warning; }
    StatusLine > .status-line--idle { color: $text-muted; }
    StatusLine > .status-line--model { color: $text; text-style: bold; }
    """

    model = _Shown[str]()
    loop = _Shown[str]()
    mode = _Shown[str]()
    state = _Shown[str]()
    turn = _Shown[int]()
    input_tokens = _Shown[int]()
    output_tokens = _Shown[int]()
    cost = _Shown[float]()
    context = _Shown["float | None"]()

    def __init__(self, status: RunStatus | None = None, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status = status if status is not None else RunStatus()

    def follow(self, event: StepEvent) -> None:
        """Fold one event into the status shown, and draw it."""
        self.status.apply(event)
        self.refresh()

    def render(self) -> Text:
        """The line, most telling first (state, model, permission mode); cut with an ellipsis when narrow."""
        status = self.status
        state_style = self.get_component_rich_style(f"status-line--{status.state}", partial=True)
        return Text.assemble(
            (status.state, state_style),
            " · ",
            (
                terminal_safe(status.model, one_line=True),
                self.get_component_rich_style("status-line--model", partial=True),
            ),
            f" · {status.mode} · {status.loop} · turn {status.turn}",
            f" · context {status.context:.0%}" if status.context is not None else "",
            f" · session: {tokens(status.input_tokens)} in / {tokens(status.output_tokens)} out, ${status.cost:.4f}",
        )
