"""Provides ``ReplayApp``: a recorded session played back in the workbench, with pause, step and speed.

The branch is replayed through the agent loop with its recorded answers (and,
with ``rerun_tools``, its tools run again in a scratch copy), onto a bus the
app shows as the workbench shows a live run: the same reducer, the same
timeline, folds and cursor. ``p`` pauses and plays, ``s`` plays one turn and
pauses, ``1``/``2``/``3`` set the speed (as recorded, ten times faster, at
once). How it ended is said in the conversation, in the headless replay's words.
"""

from __future__ import annotations

from typing import ClassVar

from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType

from chimera.core.bus import EventBus
from chimera.core.errors import ChimeraError
from chimera.core.providers.pace import SPEEDS, Pace
from chimera.core.sessions.playback import play_back, report_lines
from chimera.core.sessions.replay import ReplayReport
from chimera.core.terminal_text import terminal_safe
from chimera.themes import APP_CSS
from chimera.tui.messages import BusEvents
from chimera.tui.outside import paste_as_text, tell
from chimera.tui.state import Transcript
from chimera.tui.theme_keeper import ThemeKeeper
from chimera.tui.widgets.replay_bar import ReplayBar, speed_name
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.workbench.conversation import Conversation

__all__ = ["ReplayApp"]


class ReplayApp(App[int]):
    """One branch of a stored session, played back on screen, shown as the workbench shows a live run."""

    CSS_PATH = APP_CSS
    TITLE = "Chimera"

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q,q", "quit", "Quit", priority=True),
        Binding("p", "pause", "Pause/play"),
        Binding("s", "step", "Step"),
        Binding("1", "speed(0)", "1×", show=False),
        Binding("2", "speed(1)", "10×", show=False),
        Binding("3", "speed(2)", "Instant", show=False),
    ]

    def __init__(
        self, session_id: str, *, node: str | None = None, rerun_tools: bool = False, paused: bool = False
    ) -> None:
        super().__init__()
        self.theme_keeper = ThemeKeeper(self)
        self.conversation = Conversation(self)
        self.state = self.conversation.state
        self.session_id = session_id
        self.node = node
        self.rerun_tools = rerun_tools
        self.clock = Pace(paused=paused)
        self.report: ReplayReport | None = None
        self.ended = False
        self._bus = EventBus()

    def compose(self) -> ComposeResult:
        yield TranscriptView(self.transcript, id="conversation")
        yield StatusLine(self.state.status, spin=False, id="status")
        bar = ReplayBar(id="replay-bar")
        bar.state = "paused" if self.clock.paused else "playing"
        yield bar

    @property
    def transcript(self) -> Transcript:
        return self.state.transcript

    async def on_event(self, event: events.Event) -> None:
        """A paste into the palette's line shows as its characters (``paste_as_text``)."""
        if isinstance(event, events.Paste) and not event.is_forwarded:
            paste_as_text(event, self.focused)
        await super().on_event(event)

    def on_load(self) -> None:
        self.theme_keeper.start()  # before the stylesheet is first parsed

    def on_mount(self) -> None:
        self.sub_title = f"replay of {terminal_safe(self.session_id, one_line=True)}"
        # Where results come from stands where a live run shows its permission mode.
        self.conversation.show_status(model="replay", mode="tools re-run" if self.rerun_tools else "recorded results")
        self.conversation.show_bus(self._bus)
        self.query_one(TranscriptView).focus()
        self.play()

    @work(group="replay", exit_on_error=False)
    async def play(self) -> None:
        lines: list[tuple[str, str]] = []
        try:
            self.report = await play_back(
                self.session_id,
                self._bus,
                node=self.node,
                rerun_tools=self.rerun_tools,
                clock=self.clock,
                warn=lambda line: lines.append((line, "warning")),
            )
        except ChimeraError as err:
            lines.append((f"✗ {err}", "error"))
        else:
            ended = report_lines(self.report, rerun_tools=self.rerun_tools)
            lines += [(line, "info") for line in ended[:-1]]
            lines.append((ended[-1], "success" if self.report.success else "error"))
        finally:
            await self._bus.close()  # the bridge forwards what is queued, then ends
        await self.conversation.bridged()
        self.call_later(self._ended, lines)  # queued after the last batch of events: said after them

    def _ended(self, lines: list[tuple[str, str]]) -> None:
        for text, severity in lines:
            self.conversation.say(text, severity)
        self.ended = True
        self.query_one(ReplayBar).state = "ended" if self.report is not None and self.report.success else "stopped"

    def action_pause(self) -> None:
        if self.ended:
            return
        if self.clock.paused:
            self.clock.resume()
        else:
            self.clock.pause()
        self.query_one(ReplayBar).state = "paused" if self.clock.paused else "playing"

    def action_step(self) -> None:
        if not self.ended:
            self.clock.step()
            self.query_one(ReplayBar).state = "paused"

    def action_speed(self, which: int) -> None:
        self.clock.speed = SPEEDS[which]
        self.query_one(ReplayBar).speed = self.clock.speed
        tell(self, f"Speed: {speed_name(self.clock.speed)}", timeout=2)

    async def on_bus_events(self, message: BusEvents) -> None:
        self.conversation.show(message.events)

    async def on_transcript_view_open_output(self, message: TranscriptView.OpenOutput) -> None:
        await self.conversation.open_output(message.entry, None)

    async def on_unmount(self) -> None:
        self.theme_keeper.stop()
        self.conversation.close()
