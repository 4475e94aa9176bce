"""Provides ``ChimeraApp``, the workbench, and ``build_app``, the factory the CLI and tests share.

The app talks to the core only through its ``Session`` (``run``, ``interrupt``,
``answer`` with a permission request's id) and its bus, which it shows as every
``ConversationApp`` does; it answers the questions a run asks (permissions, plans).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import ClassVar

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from chimera.core import events as ev
from chimera.core.demo import DEMO_NOTICE
from chimera.core.errors import ChimeraError
from chimera.core.events import (
    PermissionDecided,
    PermissionRequested,
    PlanProposed,
    RunFinished,
    RunStarted,
    SteeringReturned,
    StepEvent,
    Switched,
    ignored,
)
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.terminal_text import is_blank, terminal_safe
from chimera.core.wording import plural
from chimera.tui.conversation_app import ConversationApp
from chimera.tui.screens.permission import PermissionScreen
from chimera.tui.screens.plan import PlanScreen
from chimera.tui.screens.sessions import SessionPicker
from chimera.tui.widgets.demo_banner import DemoBanner
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.transcript_view import TranscriptView

__all__ = ["ChimeraApp", "build_app"]

DEMO_PACE = 0.02  # seconds between streamed words when the demo plays on screen
DEMO_FOLLOW_UP = (
    "The demo only replays its recording. To give Chimera your own tasks, quit (ctrl+q), "
    "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server), and start it again."
)


NOT_ACTED_ON: frozenset[type[ev.StepEvent]] = frozenset(
    {  # what the workbench's app leaves to the conversation and the status line
        ev.BranchCreated,
        ev.CandidateChosen,
        ev.CandidateProposed,
        ev.CheckpointCreated,
        ev.CompactionDone,
        ev.ControlRejected,
        ev.MessageCompleted,
        ev.PermissionDecided,
        ev.PlanApproved,
        ev.PlanCancelled,
        ev.PlanEdited,
        ev.PlanProposed,
        ev.PlanStepChecked,
        ev.PlanSuggested,
        ev.Reflected,
        ev.ReminderInjected,
        ev.Replanned,
        ev.RetryScheduled,
        ev.RunStarted,
        ev.SteeringDelivered,
        ev.SteeringReturned,
        ev.TextDelta,
        ev.ThinkingDelta,
        ev.ToolCallFinished,
        ev.ToolCallStarted,
        ev.ToolOutputDelta,
        ev.TurnStarted,
        ev.UsageReported,
    }
)


class ChimeraApp(ConversationApp):
    """The workbench: a conversation, an input and a status line over one session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+q", "quit", "Quit", priority=True),
        Binding("escape", "interrupt", "Interrupt", show=True),
    ]

    def __init__(self, session: Session, options: RunOptions) -> None:
        super().__init__()
        self.session = session
        self.options = options
        self.running = False
        self.compacting = False
        self.run_shown = asyncio.Event()
        self.history_shown = asyncio.Event()
        self.resume_next: str | None = None  # a session chosen here (/sessions), opened when this one closes

    def compose(self) -> ComposeResult:
        if self.session.demo:
            yield DemoBanner(id="demo-banner")
        yield TranscriptView(self.transcript, id="conversation")
        yield StatusLine(id="status")
        yield PromptInput()

    def on_mount(self) -> None:
        self.use_themes()
        status = self.query_one(StatusLine)
        status.model = self.session.model
        status.loop = self.session.loop_name
        status.mode = self.session.policy.mode
        self.sub_title = terminal_safe(str(self.session.env.workdir), one_line=True)
        self.show_bus(self.session.bus)
        self.query_one(PromptInput).focus()
        for warning in self.session.warnings:
            self.notify(terminal_safe(warning), severity="warning", timeout=8, markup=False)
        if self.session.demo:
            self.say(DEMO_NOTICE, "warning")  # the banner folds to one line as the demo starts: the words stay here
            self.start_run(self.session.demo_task)
        elif self.options.resume:
            self.show_history()

    @work(group="history", exit_on_error=False)
    async def show_history(self) -> None:
        """A resumed session: its earlier turns first, then the input is the next turn."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.transcript.apply_all(events)
        self.transcript.note(f"Resumed session {self.session.id}")
        self.query_one(TranscriptView).refresh_entries()
        self.history_shown.set()

    @work(group="history", exclusive=True, exit_on_error=False)
    async def show_branch(self, switched: Switched) -> None:
        """After a switch the conversation is the branch switched to: told again from the session, then the switch."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.transcript.clear()
        self.transcript.apply_all([*events, switched])
        self.query_one(TranscriptView).refresh_entries()
        self.history_shown.set()

    def events_shown(self, events: list[StepEvent]) -> None:
        returned = [event.text for event in events if isinstance(event, SteeringReturned)]
        if returned:  # words no turn read: back in the input, in the order sent, before what is there
            prompt = self.query_one(PromptInput)
            prompt.value = " ".join([*returned, prompt.value]).strip()
            self.notify("Not delivered: your words are back in the input.", timeout=4)
        for event in events:
            match event:
                case PermissionRequested():
                    self._ask(event)
                case PermissionDecided(decision="cancelled", request_id=request_id):
                    self._withdraw(request_id)
                case PlanProposed(request_id=request_id, steps=steps) if request_id:
                    self._propose(request_id, steps)
                case RunStarted() if self.session.demo:
                    self.query_one(DemoBanner).folded = True
                case Switched():
                    self.history_shown.clear()
                    self.show_branch(event)
                case RunFinished():
                    self._withdraw_plans()
                    self.run_shown.set()
                case _:
                    ignored(event, NOT_ACTED_ON)

    def _ask(self, asked: PermissionRequested) -> None:
        def resolve(verdict: str | None) -> None:
            if verdict is not None:  # None: withdrawn, the run no longer waits
                self.session.answer(asked.request_id, verdict)

        screen = PermissionScreen(asked.request_id, asked.call_id, asked.name, dict(asked.args), asked.reason)
        self.push_screen(screen, resolve)

    def _propose(self, request_id: str, steps: list[str]) -> None:
        def resolve(answer: tuple[str, str] | None) -> None:
            if answer is not None:  # None: withdrawn, the run no longer waits
                self.session.answer(request_id, answer[0], answer[1] or None)

        self.push_screen(PlanScreen(request_id, steps), resolve)

    def _withdraw_plans(self) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, PlanScreen):
                screen.withdraw()

    def _withdraw(self, request_id: str) -> None:
        for screen in self.screen_stack:
            if isinstance(screen, PermissionScreen) and screen.request_id == request_id:
                screen.withdraw()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        text = message.value.strip()
        if is_blank(text):  # nothing to read in it: never sent, as a task or as steering
            return
        command, _, argument = text.partition(" ")
        if command == "/sessions":
            message.input.value = ""
            self.action_sessions()
            return
        if command == "/compact" and not self.session.demo:
            if self.running:
                self.notify("/compact waits for the run: send it when the run ends, or interrupt it.", timeout=5)
                return
            message.input.value = ""
            self.compact_conversation(argument.strip())
            return
        if self.running:  # steering: the words go to the run at its next step
            if self.session.steer(text):
                message.input.value = ""
                self.notify("Sent: Chimera reads it after the current step.", timeout=3)
            elif self.session.agent.running:  # it has decided it is over: the words are kept here
                self.notify("The run is ending: press enter again once it has, to send this as a task.", timeout=4)
            else:
                self.notify("The run is just starting: send it again in a moment.", severity="warning")
            return
        message.input.value = ""
        if self.session.demo:
            self.notify(DEMO_FOLLOW_UP, title="This is the demo", severity="warning", timeout=10)
            return
        self.start_run(text)

    def on_prompt_input_queued(self, message: PromptInput.Queued) -> None:
        """``tab``: the text waits for the run going, then runs as the next task."""
        prompt = self.query_one(PromptInput)
        if not self.running or self.compacting or self.session.demo:
            self.notify("Nothing is running: press enter to send it now.", timeout=3)
            return
        self.session.follow_up(message.text)
        prompt.value = ""
        waiting = len(self.session.follow_ups)
        self.notify(f"Queued: it runs when this run ends ({plural(waiting, 'task')} waiting).", timeout=4)

    def start_run(self, task: str) -> None:
        self.running = True
        self.run_shown.clear()
        self.run_task(task)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def compact_conversation(self, focus: str) -> None:
        """``/compact [focus]``: summarize the older part of the conversation now."""
        self.running = self.compacting = True
        status = self.query_one(StatusLine)
        status.state = "compacting"
        try:
            done = await self.session.compact(focus)
        except ChimeraError as err:
            self.say(f"✗ compaction failed: {err}", "error")
            status.state = "failed"
            return
        finally:
            self.running = self.compacting = False
        status.state = "idle"
        if done is None:
            self.notify("Nothing to compact: the conversation is still short.", timeout=4)

    def action_interrupt(self) -> None:
        """Stop the run: the stream ends, tools are killed, the conversation stays valid."""
        if self.compacting:  # nothing is recorded until the summary is in: stopping loses nothing
            self.workers.cancel_group(self, "run")
            self.query_one(StatusLine).state = "interrupted"
            self.notify("Compaction stopped: the conversation is as it was.", timeout=3)
        elif self.running:
            self.session.interrupt()  # words the run never read come back as events (see events_shown)
            unsent = self.session.take_follow_ups()
            if unsent:  # tasks queued after the run go back to the input
                prompt = self.query_one(PromptInput)
                prompt.value = " ".join([*unsent, prompt.value]).strip()
            self.notify("Interrupting…", timeout=2)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_task(self, task: str) -> None:
        try:
            await self.session.run(task)
        finally:
            self.running = False

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.state == WorkerState.ERROR:
            # A fault in the engine itself: say so on screen instead of hanging at "running".
            error = event.worker.error
            self.say(f"✗ the run failed unexpectedly: {type(error).__name__}: {error}", "error")
            self.query_one(StatusLine).state = "failed"
            self.run_shown.set()

    def action_sessions(self) -> None:
        """``/sessions``: the session picker over the workbench; the session chosen opens next."""
        self.push_screen(SessionPicker(self.session.env.workdir), self.resume_session)

    def resume_session(self, session_id: str | None) -> None:
        """The session picker's answer (``push_screen(SessionPicker(workdir), app.resume_session)``): close
        the workbench so that ``chimera`` opens ``session_id`` next. None, or this session: nothing changes."""
        if session_id is None or session_id == self.session.id:
            return
        if self.session.demo:
            self.notify("Resuming a session needs a model: quit, set ANTHROPIC_API_KEY, and start again.", timeout=6)
            return
        if self.running:
            self.notify("A run is going: interrupt it (escape) or let it finish, then choose again.", timeout=5)
            return
        self.resume_next = session_id
        self.exit()

    def output_folder(self) -> Path:
        return self.session.env.spill_dir

    async def on_unmount(self) -> None:
        await self.session.close()


def build_app(options: RunOptions, *, demo_pace: float = DEMO_PACE) -> ChimeraApp:
    """Prepare the session for ``options`` (raising ConfigError on bad input) and build the app."""
    session = start_session(replace(options, demo_pace=demo_pace, interactive=True))
    return ChimeraApp(session, options)
