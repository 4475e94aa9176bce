"""Provides ``StatusLine``: one line that shows a ``RunStatus`` (``tui.state.run_status``).

State (a spinner and the time elapsed while a run works), model, permission mode, strategy, turn,
context used against the model's window, the session's tokens in and out and its cost (every run
since the workbench opened), the session's short id and the workspace. Too narrow for all of it,
whole parts are left out, least useful first (``tui.status_parts``): the tokens and the cost stay.
The line draws the status it is given and nothing else; its fields (``state``, ``model``,
``turn``…) read and write that status, and :meth:`StatusLine.follow` folds one event into it.
The spinner moves 8 times a second while a run works, in the same screen update as streamed words when
they come; idle, nothing redraws the line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, Generic, TypeVar

from rich.style import Style
from rich.text import Text
from textual.widgets import Static

from chimera.tui.state.run_status import RunStatus
from chimera.tui.status_parts import SEPARATOR, SPIN_RATE, fit, parts_of, spin_frame, spinning

if TYPE_CHECKING:  # (the events load with the first one: the first frame draws none)
    from chimera.core.events import StepEvent

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
        "status-line--summarizing",
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
    StatusLine > .status-line--summarizing { color: $accent; text-style: bold; }
    StatusLine > .status-line--done { color: $success; }
    StatusLine > .status-line--failed { color: $error; text-style: bold; }
    StatusLine > .status-line--interrupted { color: $warning; }
    StatusLine > .status-line--cancelled { color: $warning; }
    StatusLine > .status-line--model { color: $foreground; text-style: bold; }
    /* idle in the line's own colour: a part's "auto" colour ($text, $text-muted) is not worked out on the panel */
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

    def __init__(self, status: RunStatus | None = None, *, spin: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.status = status if status is not None else RunStatus()
        self.spin = spin  # a replay's line has no spinner: its run's time is the recording's, not this one's
        self.ticks = 0  # spinner frames the ticker drew on its own (not with streamed words)
        self.ticking = False  # whether the ticker runs (only while a run or a compaction works)
        self._shown = -1  # the spinner frame last drawn
        self._kept_up = float("-inf")  # when a batch of streamed words last moved the spinner

    def on_mount(self) -> None:
        # Twice a frame: a tick that lands just before the spinner moves on must not make it skip a frame.
        self._ticker = self.set_interval(1 / (2 * SPIN_RATE), self._tick, pause=True)

    def _tick(self) -> None:
        if not spinning(self.status):
            self._ticker.pause()
            self.ticking = False
        elif self.status.clock() - self._kept_up >= 1 / SPIN_RATE and self._move():  # no words moved it lately
            self.ticks += 1

    def keep_up(self) -> None:
        """A batch of streamed words is drawn: the spinner moves (if its frame is due) in the same screen update,
        and the ticker leaves it to the words while they come (a screen update costs the same whatever it draws,
        so one for both, not one each)."""
        self._kept_up = self.status.clock()
        self._move()

    def _move(self) -> bool:
        """Draw the line again if its spinner (and so its time) moved on since it was drawn; whether it did."""
        if self.spin and spinning(self.status) and spin_frame(self.status, self.status.clock()) != self._shown:
            self.refresh()
            return True
        return False

    def follow(self, event: StepEvent) -> None:
        """Fold one event into the status shown, and draw it."""
        self.status.apply(event)
        self.refresh()

    def render(self) -> Text:
        """The parts that fit, most telling first (state, model, permission mode); whole parts left out
        when narrow (the workspace first), never the tokens or the cost."""
        status = self.status
        if self.spin and spinning(status) and not self.ticking and hasattr(self, "_ticker"):
            self._ticker.resume()  # it pauses itself once the run is over
            self.ticking = True
        now = status.clock()
        self._shown = spin_frame(status, now)
        shown = fit(parts_of(status, now, spin=self.spin), max(1, self.content_region.width or self.size.width))
        pieces: list[tuple[str, Style | str] | str] = []
        for part in shown:
            if pieces:
                pieces.append(SEPARATOR)
            if part.name == "state":
                pieces.append((part.text, self.get_component_rich_style(f"status-line--{status.state}", partial=True)))
            elif part.name == "model":
                pieces.append((part.text, self.get_component_rich_style("status-line--model", partial=True)))
            else:
                pieces.append(part.text)
        return Text.assemble(*pieces)
