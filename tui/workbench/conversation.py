"""Provides ``Conversation``: a conversation shown from a bus, the part the workbench and a replay share.

It holds a ``WorkbenchState`` that one reducer builds from the bus's events, and draws its views: the
conversation pane (``TranscriptView``) and the status line. A long-lived worker reads the bus and hands its
events to the app in per-frame batches as one message type, ``BusEvents``; the app gives each batch to
:meth:`Conversation.show`, which folds it into the state, redraws, and then tells ``on_shown`` (the
app's other parts act on it). While a call runs its time ticks, and only then.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import App
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.worker import Worker

from chimera.core.bus import EventBus, StreamSubscription
from chimera.core.events import StepEvent
from chimera.tui.messages import BusEvents
from chimera.tui.outside import tell
from chimera.tui.screens.output import OutputScreen, saved_output
from chimera.tui.state import Entry, Transcript, WorkbenchState
from chimera.tui.state.run_status import not_followed
from chimera.tui.transcript_render import summary_line
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.workbench.focus import open_screen

__all__ = ["FRAME_SECONDS", "Conversation"]

# The bridge forwards at most 12 batches a second. Each batch of streamed text is a frame, most of them
# the whole conversation scrolled and drawn again; 12 reads as smooth and costs a fifth less of a core
# than 20 (bench_process_cpu.py), while keys are drawn as they come, apart from it.
FRAME_SECONDS = 1 / 12
TICK_SECONDS = 1.0  # while a call runs, how often its time is brought up to date


class Conversation:
    """The state a bus's events build, and the conversation pane and status line that show it."""

    def __init__(
        self,
        app: App[Any],
        state: WorkbenchState | None = None,
        on_shown: Callable[[list[StepEvent]], None] | None = None,
    ) -> None:
        self.app = app
        self.state = state if state is not None else WorkbenchState()
        self.on_shown = on_shown
        self._events: StreamSubscription | None = None
        self._bridge_worker: Worker[None] | None = None
        self._ticker: Timer | None = None  # ticks running calls' time; none while nothing runs

    @property
    def transcript(self) -> Transcript:
        return self.state.transcript

    @property
    def view(self) -> TranscriptView:
        return self.app.query_one(TranscriptView)

    # --- the bus ----------------------------------------------------------------------------

    def show_bus(self, bus: EventBus) -> None:
        """From now on, every event ``bus`` publishes reaches the state and the screen."""
        self._events = bus.stream()
        self._bridge_worker = self.app.run_worker(
            self._bridge(self._events), group="bridge", exit_on_error=False, name="_bridge"
        )

    async def bridged(self) -> None:
        """Wait until everything the bus published is forwarded (the bus must be closed)."""
        if self._bridge_worker is not None:
            await self._bridge_worker.wait()

    async def _bridge(self, events: StreamSubscription) -> None:
        """Forward bus events to the app, at most one batch a frame."""
        async for batch in events.batches():
            self.app.post_message(BusEvents(batch))
            await asyncio.sleep(FRAME_SECONDS)

    def show(self, events: list[StepEvent]) -> None:
        """A batch from the bus: into the state, onto the screen, then to ``on_shown``."""
        self.state.apply_all(events)
        try:
            view, status = self.view, self.app.query_one(StatusLine)
        except NoMatches:  # a batch that arrives as the app closes: there is no screen left to show it on
            return
        view.refresh_entries()
        if any(type(event) not in not_followed() for event in events):  # streamed words change no status
            status.refresh()
        else:  # but its spinner moves with them, in the same screen update
            status.keep_up()
        self._keep_time()
        if self.on_shown is not None:
            self.on_shown(events)

    def close(self) -> None:
        if self._events is not None:
            self._events.cancel()

    # --- what it shows ------------------------------------------------------------------------

    def show_status(self, **fields: object) -> None:
        """Change the run's status (``state="compacting"``…) and draw the status line again."""
        for name, value in fields.items():
            setattr(self.state.status, name, value)
        with contextlib.suppress(NoMatches):  # no line left to draw (the app is closing)
            self.app.query_one(StatusLine).refresh()

    def say(self, text: str, severity: str = "info") -> None:
        """A notice of the app's own in the conversation."""
        self.transcript.note(text, severity)
        self.redraw()

    def redraw(self) -> None:
        """Draw the conversation again after its entries changed (nothing when the app is closing)."""
        with contextlib.suppress(NoMatches):
            self.view.refresh_entries()

    def tell_again(self, events: list[StepEvent], note: str = "") -> None:
        """The conversation told again from ``events`` (a branch, after a move), then ``note``."""
        self.transcript.clear()
        self.state.tell(events)
        if note:
            self.transcript.note(note)
        self.redraw()

    async def open_output(self, entry: Entry, folder: Path | None) -> None:
        """The whole saved output of the call ``entry`` in the output viewer (``o`` on it)."""
        saved = entry.data.get("full_output")
        if not isinstance(saved, str) or not saved:
            tell(self.app, "This call's output is shown whole: nothing more was saved.", timeout=4)
            return
        path, why = saved_output(Path(saved), folder)
        if why:
            tell(self.app, why, severity="warning", timeout=6)
            return
        await open_screen(self.app, OutputScreen(summary_line(entry), path))

    # --- running calls' time -----------------------------------------------------------------

    def _keep_time(self) -> None:
        """A timer ticks while a call runs, and only then."""
        if self.transcript.running and self._ticker is None:
            self._ticker = self.app.set_interval(TICK_SECONDS, self._tick)
        elif not self.transcript.running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _tick(self) -> None:
        """Running calls show their time: only the calls whose second changed are drawn again."""
        if self.transcript.tick():
            self.redraw()
        self._keep_time()
