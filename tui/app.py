"""Provides ``ChimeraApp``, the workbench, and ``build_app``, the factory the CLI and tests share.

The app talks to the core only through its ``Session`` (``run``, ``steer``, ``interrupt``,
``answer`` with a question's request id, ``configure``…) and its bus, whose events build the
app's ``WorkbenchState``; the screen is a view of that state. It is built in layers, each a
module: the conversation (``ConversationApp``), the questions (``QuestionApp``), the commands
(``CommandActions``, ``SessionActions``), and here the screen, the input and the session's history.
What is typed goes to the model as a task or as steering, unless it starts with a slash: then
it is a command (``tui.commands``), and never reaches the model.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.widgets import Input, OptionList
from textual.worker import Worker, WorkerState

from chimera.core import events as ev
from chimera.core.demo import DEMO_NOTICE
from chimera.core.events import (
    RunFinished,
    RunStarted,
    StepEvent,
    Switched,
    TextDelta,
    ThinkingDelta,
    ToolOutputDelta,
    ignored,
)
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.terminal_text import is_blank, terminal_safe
from chimera.core.wording import plural, shown_path
from chimera.tui.commands import find, is_command, literal, parse, unknown
from chimera.tui.footer_hints import hints
from chimera.tui.outside import tell
from chimera.tui.terminal_input import PasteKeepingDriver
from chimera.tui.tree_actions import TreeActions
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.demo_banner import DemoBanner
from chimera.tui.widgets.key_footer import KeyFooter
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.widgets.tree_panel import TreePanel
from chimera.tui.widgets.welcome import Welcome

# The events that come many a second while a model or a command streams, and only add to what is shown.
STREAMED: frozenset[type[StepEvent]] = frozenset({TextDelta, ThinkingDelta, ToolOutputDelta})

__all__ = ["ChimeraApp", "build_app"]

DEMO_PACE = 0.02  # seconds between streamed words when the demo plays on screen
DEMO_FOLLOW_UP = (
    "The demo only replays its recording. To give Chimera your own tasks, quit (ctrl+q), "
    "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server), and start it again."
)


NOT_ACTED_ON: frozenset[type[ev.StepEvent]] = frozenset(
    {  # what the workbench's app leaves to its state (and the views of it)
        ev.BranchCreated,
        ev.BranchSummarized,
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
        ev.PermissionRequested,
        ev.PlanStepChecked,
        ev.PlanSuggested,
        ev.Reflected,
        ev.ReminderInjected,
        ev.Replanned,
        ev.RetryScheduled,
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


class ChimeraApp(TreeActions):
    """The workbench: a conversation, an input and a status line over one session."""

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 (Textual's): the plan above, or beside

    def __init__(self, session: Session, options: RunOptions) -> None:
        super().__init__(session, options)
        self.history_shown = asyncio.Event()
        self.resume_next: str | None = None  # a session chosen here (/sessions), opened when this one closes

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal; on POSIX, one that takes a bracketed paste whole (ESC and all)."""
        driver = super().get_driver_class()
        return PasteKeepingDriver if driver is LinuxDriver else driver

    def compose(self) -> ComposeResult:
        if self.session.demo:
            yield DemoBanner(id="demo-banner")
        if not self.session.demo and not self.options.resume:  # a new session: how to start, until its first task
            yield Welcome.of(self.session, self.facts())
        with Horizontal(id="middle"):
            yield TranscriptView(self.transcript, id="conversation")
            yield PlanPanel(self.state.plan, id="plan")
            yield TreePanel(id="tree")
        yield QuestionPanel(id="question")  # above the input, the conversation still on screen above it
        yield StatusLine(self.state.status, id="status")
        yield CompletionList(id="completions")
        yield PromptInput(completer=self.complete)
        yield KeyFooter(lambda: hints(self.facts()), id="footer")

    def on_mount(self) -> None:
        self.use_themes()
        self.show_status(model=self.session.model, loop=self.session.loop_name, mode=self.session.policy.mode)
        self.show_status(workspace=shown_path(self.session.env.workdir))
        if self.options.resume:
            self.show_status(session=self.session.id)
        self.sub_title = terminal_safe(str(self.session.env.workdir), one_line=True)
        self.show_bus(self.session.bus)
        self.query_one(PromptInput).focus()
        self.warn_once(self.session.warnings)
        if self.session.demo:
            self.say(DEMO_NOTICE, "warning")  # the banner folds to one line as the demo starts: the words stay here
            self.start_run(self.session.demo_task)
        elif self.options.resume:
            self.show_history()

    @work(group="history", exit_on_error=False)
    async def show_history(self) -> None:
        """A resumed session: its earlier turns first, then the input is the next turn."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.state.tell(events)
        self.transcript.note(f"Resumed session {self.session.id}")
        self.query_one(TranscriptView).refresh_entries()
        self.history_shown.set()

    @work(group="history", exclusive=True, exit_on_error=False)
    async def show_branch(self, switched: Switched) -> None:
        """After a switch the conversation is the branch switched to: told again from the session, then the switch."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.transcript.clear()
        self.state.tell([*events, switched])
        self.query_one(TranscriptView).refresh_entries()
        self.history_shown.set()

    def events_shown(self, events: list[StepEvent]) -> None:
        returned = self.state.take_returned()
        if returned:  # words no turn read: back in the input, in the order sent, before what is there
            prompt = self.query_one(PromptInput)
            prompt.value = " ".join([*returned, prompt.value]).strip()
            tell(self, "Not delivered: your words are back in the input.", timeout=4)
        if self.session.demo and self.state.status.state != "idle":
            self.query_one(DemoBanner).folded = True
        if any(type(event) not in STREAMED for event in events):  # streamed words change no question, no plan
            self.show_questions()
        for event in events:
            match event:
                case Switched():
                    self.history_shown.clear()
                    self.show_branch(event)
                case RunFinished():
                    self.end_shown = True
                    self.run_over()
                    if self.tree_panel.has_class("-shown"):  # the run grew the tree
                        self.load_tree()
                case RunStarted():
                    for welcome in self.query(Welcome):  # the first task is sent: the conversation takes its place
                        welcome.remove()
                case _:
                    ignored(event, NOT_ACTED_ON)

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        """A command runs (its text leaves the input when it did); words go to the model, as a task or as
        steering while a run works."""
        self.query_one(CompletionList).hide()
        if is_blank(message.value):  # nothing to read in it: never sent, as a task or as steering
            return
        prompt = self.query_one(PromptInput)
        if is_command(message.value):  # its words as typed, a paste in them whole
            if await self.run_command(*parse(prompt.whole(message.value))):
                message.input.value = ""
                prompt.forget_pastes()
            return
        text = prompt.whole(literal(message.value).strip())  # a multi-line paste goes whole
        if self.running:  # steering: the words go to the run at its next step
            if self.session.steer(text):
                self.query_one(TranscriptView).follow()  # what the run does with it shows at the end
                message.input.value = ""
                prompt.forget_pastes()
                tell(self, "Sent: Chimera reads it after the current step.", timeout=3)
            elif self.compacting:  # a summary between runs: no run to read them
                tell(self, "Chimera is writing a summary: press enter again once it is done.", timeout=4)
            elif self.session.agent.running or self.end_shown:  # it is over or about to be: the words stay here
                tell(self, "The run is ending: press enter again once it has, to send this as a task.", timeout=4)
            else:
                tell(self, "The run is just starting: send it again in a moment.", severity="warning")
            return
        message.input.value = ""
        prompt.forget_pastes()
        if self.session.demo:
            tell(self, DEMO_FOLLOW_UP, title="This is the demo", severity="warning", timeout=10)
            return
        self.query_one(TranscriptView).follow()
        self.start_run(text)

    def on_prompt_input_queued(self, message: PromptInput.Queued) -> None:
        """``tab``: the text waits for the run going, then runs as the next task (a command is never queued)."""
        prompt = self.query_one(PromptInput)
        if is_command(message.text):
            name, _ = parse(message.text)
            self._refuse(
                f"/{name} is a command: press enter to run it (only words are queued)." if find(name) else unknown(name)
            )
            return
        if not self.running or self.compacting or self.session.demo:
            tell(self, "Nothing is running: press enter to send it now.", timeout=3)
            return
        self.session.follow_up(prompt.whole(literal(message.text)))
        self.state.follow_ups = self.session.follow_ups
        prompt.value = ""
        prompt.forget_pastes()
        waiting = len(self.session.follow_ups)
        tell(self, f"Queued: it runs when this run ends ({plural(waiting, 'task')} waiting).", timeout=4)

    async def on_prompt_input_help_asked(self, _: PromptInput.HelpAsked) -> None:
        await self.run_command("help")

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        """A click on a completion takes it."""
        if isinstance(message.option_list, CompletionList):
            self.query_one(PromptInput).take_completion(message.option_index)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.state == WorkerState.ERROR:
            # A fault in the engine itself: say so on screen instead of hanging at "running".
            error = event.worker.error
            self.say(f"✗ the run failed unexpectedly: {type(error).__name__}: {error}", "error")
            self.show_status(state="failed")
            self.run_shown.set()

    def resume_hint(self) -> str:
        """What the terminal says after the app exits: how to come back to this session (nothing for the demo,
        or for a session that never got a task and so was never kept)."""
        store = self.session.store
        if self.session.demo or not len(store.tree) or not store.folder.exists():
            return ""
        return f"Resume this session: chimera --resume {self.session.id}"

    def output_folder(self) -> Path:
        return self.session.env.spill_dir

    async def on_unmount(self) -> None:
        await self.session.close()


def build_app(options: RunOptions, *, demo_pace: float = DEMO_PACE) -> ChimeraApp:
    """Prepare the session for ``options`` (raising ConfigError on bad input) and build the app."""
    session = start_session(replace(options, demo_pace=demo_pace, interactive=True))
    return ChimeraApp(session, options)
