"""Provides ``ConversationApp``: what the workbench and a replay share.

A ``WorkbenchState`` that one reducer builds from a bus's events, and its
views: the conversation pane (``TranscriptView``, drawn from the state's
transcript) and the status line (the state's run status). A long-lived worker
reads the bus and forwards its events in per-frame batches as one message type,
``BusEvents``; a subclass hears each batch after the views have it
(:meth:`events_shown`). Its themes are kept by a ``ThemeKeeper``
(``switch_theme`` puts one on).
"""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

from textual import work
from textual.app import App
from textual.css.query import NoMatches
from textual.timer import Timer
from textual.worker import Worker

from chimera.core.bus import EventBus, StreamSubscription
from chimera.core.events import StepEvent
from chimera.themes import APP_CSS
from chimera.tui.messages import BusEvents
from chimera.tui.outside import tell
from chimera.tui.screens.output import OutputScreen, saved_output
from chimera.tui.state import Transcript, WorkbenchState
from chimera.tui.state.run_status import NOT_FOLLOWED
from chimera.tui.theme_keeper import ThemeKeeper
from chimera.tui.transcript_render import summary_line
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.transcript_view import TranscriptView

__all__ = ["FRAME_SECONDS", "ConversationApp"]

# The bridge forwards at most 12 batches a second. Each batch of streamed text is a frame, most of them
# the whole conversation scrolled and drawn again; 12 reads as smooth and costs a fifth less of a core
# than 20 (bench_process_cpu.py), while keys are drawn as they come, apart from it.
FRAME_SECONDS = 1 / 12
TICK_SECONDS = 1.0  # while a call runs, how often its time is brought up to date


class ConversationApp(App[int]):
    """A conversation shown from a bus; call :meth:`show_bus` once the screen is up."""

    CSS_PATH = APP_CSS
    TITLE = "Chimera"

    def __init__(self) -> None:
        super().__init__()
        self.state = WorkbenchState()  # everything the screen shows, built from the bus's events
        self._events: StreamSubscription | None = None
        self._bridge_worker: Worker[None] | None = None
        self._ticker: Timer | None = None  # ticks running calls' time; none while nothing runs
        self.theme_keeper = ThemeKeeper(self)

    @property
    def transcript(self) -> Transcript:
        """The conversation the pane shows (the state's)."""
        return self.state.transcript

    def use_themes(self) -> None:
        """Chimera's themes and the person's (``CHIMERA_HOME/themes/*.toml``, reloaded as they are saved),
        the one chosen last put on."""
        self.theme_keeper.start()

    def switch_theme(self, name: str) -> None:
        """Put on the theme ``name`` (``dark`` for ``chimera-dark``) and remember it for the next start;
        an unknown name gets one notice listing the known ones."""
        self.theme_keeper.switch(name)

    def show_bus(self, bus: EventBus) -> None:
        """From now on, every event ``bus`` publishes reaches the pane and the status line."""
        self._events = bus.stream()
        self._bridge_worker = self._bridge(self._events)

    async def bridged(self) -> None:
        """Wait until everything the bus published is forwarded (the bus must be closed)."""
        if self._bridge_worker is not None:
            await self._bridge_worker.wait()

    @work(group="bridge", exit_on_error=False)
    async def _bridge(self, events: StreamSubscription) -> None:
        """Forward bus events to the UI, at most one batch a frame."""
        async for batch in events.batches():
            self.post_message(BusEvents(batch))
            await asyncio.sleep(FRAME_SECONDS)

    async def on_bus_events(self, message: BusEvents) -> None:
        self.state.apply_all(message.events)
        try:
            view, status = self.query_one(TranscriptView), self.query_one(StatusLine)
        except NoMatches:  # a batch that arrives as the app closes: there is no screen left to show it on
            return
        view.refresh_entries()
        if any(type(event) not in NOT_FOLLOWED for event in message.events):  # streamed words change no status
            status.refresh()
        else:  # but its spinner moves with them, in the same screen update
            status.keep_up()
        self._keep_time()
        self.events_shown(message.events)

    def show_status(self, **fields: object) -> None:
        """Change the run's status (``state="compacting"``…) and draw the status line again."""
        for name, value in fields.items():
            setattr(self.state.status, name, value)
        with contextlib.suppress(NoMatches):  # no line left to draw (the app is closing)
            self.query_one(StatusLine).refresh()

    def _keep_time(self) -> None:
        """A timer ticks while a call runs, and only then."""
        if self.transcript.running and self._ticker is None:
            self._ticker = self.set_interval(TICK_SECONDS, self._tick)
        elif not self.transcript.running and self._ticker is not None:
            self._ticker.stop()
            self._ticker = None

    def _tick(self) -> None:
        """Running calls show their time: only the calls whose second changed are drawn again."""
        if self.transcript.tick():
            self.query_one(TranscriptView).refresh_entries()
        self._keep_time()

    def events_shown(self, events: list[StepEvent]) -> None:
        """A batch of events is in the state and on screen: a subclass acts on it (asks the questions it holds)."""

    def output_folder(self) -> Path | None:
        """Where this conversation's calls saved their full output (None: nowhere to open from)."""
        return None

    def on_transcript_view_open_output(self, message: TranscriptView.OpenOutput) -> None:
        entry = message.entry
        saved = entry.data.get("full_output")
        if not isinstance(saved, str) or not saved:
            tell(self, "This call's output is shown whole: nothing more was saved.", timeout=4)
            return
        path, why = saved_output(Path(saved), self.output_folder())
        if why:
            tell(self, why, severity="warning", timeout=6)
            return
        self.push_screen(OutputScreen(summary_line(entry), path))

    def say(self, text: str, severity: str = "info") -> None:
        """A notice of the app's own in the conversation."""
        self.transcript.note(text, severity)
        self.query_one(TranscriptView).refresh_entries()

    async def on_unmount(self) -> None:
        self.theme_keeper.stop()
        if self._events is not None:
            self._events.cancel()
