"""Provides ``ChimeraApp``, the workbench, and ``build_app``, the factory the CLI and tests share.

The app is thin: it composes the screen and holds the parts that act, each an object with the ``Session`` it
acts through (``tui.workbench``): the conversation drawn from the bus (``Conversation``), the runs
(``Runs``), the answers to questions (``Answers``), the input (``Prompt``), the commands (``CommandRunner``),
the sessions (``Sessions``) and the session's tree (``SessionTree``). Textual's messages come to the app and
go on to the part they concern. The core is reached only through the ``Session`` and its bus. What is typed
goes to the model as a task or as steering, unless it starts with a slash: then it is a command
(``tui.commands``), and never reaches the model. Where the focus may be, and how it moves, is written down in
``tui.workbench.focus``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import ClassVar

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.command import Provider
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.screen import Screen
from textual.widgets import Input, OptionList
from textual.worker import Worker, WorkerState

from chimera.core import events as ev
from chimera.core.demo import DEMO_NOTICE
from chimera.core.events import RunFinished, RunStarted, StepEvent, Switched, TextDelta, ThinkingDelta, ToolOutputDelta
from chimera.core.gc_pause import started
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.wording import command, plural, shown_path
from chimera.themes import APP_CSS
from chimera.tui.command_views import WorkbenchCommands, command_bindings
from chimera.tui.commands import Facts
from chimera.tui.footer_hints import hints
from chimera.tui.hangup import let_go_of_gone_streams
from chimera.tui.messages import BusEvents
from chimera.tui.outside import tell
from chimera.tui.state import Transcript, WorkbenchState
from chimera.tui.terminal_input import PasteKeepingDriver
from chimera.tui.theme_keeper import ThemeKeeper
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
from chimera.tui.workbench.answers import Answers
from chimera.tui.workbench.command_runner import CommandRunner
from chimera.tui.workbench.conversation import Conversation
from chimera.tui.workbench.focus import place_named
from chimera.tui.workbench.mcp import McpPart
from chimera.tui.workbench.prompt import Prompt
from chimera.tui.workbench.runs import Runs
from chimera.tui.workbench.session_tree import SessionTree
from chimera.tui.workbench.sessions import Sessions

__all__ = ["ChimeraApp", "build_app"]

DEMO_PACE = 0.02  # seconds between streamed words when the demo plays on screen

# The events that come many a second while a model or a command streams, and only add to what is shown.
STREAMED: frozenset[type[StepEvent]] = frozenset({TextDelta, ThinkingDelta, ToolOutputDelta})
_REGISTRY_HAS = {"Theme", "Quit", "Keys"}  # Textual's own palette commands the registry replaces

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


class ChimeraApp(App[int]):
    """The workbench: a conversation, an input and a status line over one session."""

    CSS_PATH = APP_CSS
    TITLE = "Chimera"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 (Textual's): the plan above, or beside
    BINDINGS: ClassVar[list[BindingType]] = list(command_bindings())
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = App.COMMANDS | {WorkbenchCommands}

    def __init__(self, session: Session, options: RunOptions) -> None:
        super().__init__()
        self.session = session
        self.options = options
        self.state = WorkbenchState()  # everything the screen shows, built from the bus's events
        self.theme_keeper = ThemeKeeper(self)
        self.conversation = Conversation(self, self.state, on_shown=self.events_shown)
        self.runs = Runs(self)
        self.answers = Answers(self)
        self.prompt = Prompt(self)
        self.sessions = Sessions(self)
        self.session_tree = SessionTree(self)
        self.mcp = McpPart(self)
        self.commands = CommandRunner(self, [self.runs, self.answers, self.sessions, self.session_tree, self.mcp])
        self.history_shown = asyncio.Event()

    # --- what the parts and the tests read ---------------------------------------------------

    @property
    def transcript(self) -> Transcript:
        """The conversation the pane shows (the state's)."""
        return self.state.transcript

    @property
    def run_shown(self) -> asyncio.Event:
        """Set once the run's end is on screen and the next task can be sent."""
        return self.runs.shown

    @property
    def running(self) -> bool:
        return self.runs.running

    @property
    def resume_next(self) -> str | None:
        """A session chosen here (``/sessions``), opened when this one closes."""
        return self.sessions.resume_next

    # --- the screen ---------------------------------------------------------------------------

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
            yield PlanPanel(self.state.plan, self.answers, id="plan")
            yield TreePanel(self.session_tree, id="tree")
        yield QuestionPanel(self.answers, id="question")  # above the input, the conversation still on screen above it
        yield StatusLine(self.state.status, id="status")
        yield CompletionList(id="completions")
        yield PromptInput(completer=self.commands.complete)
        yield KeyFooter(self.footer_hints, id="footer")

    def on_load(self) -> None:
        self.theme_keeper.start()  # before the stylesheet is first parsed: it is parsed once, in the right colours

    def on_mount(self) -> None:
        session = self.session
        self.conversation.show_status(
            model=session.model, loop=session.loop_name, strategy=session.loop_name, mode=session.policy.mode
        )
        self.conversation.show_status(workspace=shown_path(session.env.workdir))
        if self.options.resume:
            self.conversation.show_status(session=session.id)
        self.conversation.show_bus(session.bus)
        self.prompt.focus()
        self._stop_on_signals()
        self.call_after_refresh(started)  # the collector, paused while the workbench started, runs again
        self.call_after_refresh(self.mcp.started)  # the MCP servers start once the first frame is on screen
        self.warn_opened(session.warnings)
        if session.demo:
            self.conversation.say(DEMO_NOTICE, "warning")  # the banner folds to one line as the demo starts
            self.runs.start(session.demo_task)
        elif self.options.resume:
            self.run_worker(self._show_history(), group="history", exit_on_error=False)

    def _stop_on_signals(self) -> None:
        """In a real terminal, SIGTERM and SIGHUP (the terminal closed) end the workbench as ctrl+q does: a run
        is interrupted, a comparison's variants stop (their scratch copies removed), the session closes."""
        if self.is_headless:
            return
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
                loop.add_signal_handler(signum, self._stopped_by_signal, signum)

    def _stopped_by_signal(self, signum: signal.Signals) -> None:
        """Stop as ctrl+q would, with the exit code of a process the signal ended (128 + its number)."""
        if signum == signal.SIGHUP:  # nothing more can be drawn: what is still written goes nowhere, quietly
            let_go_of_gone_streams()
        from chimera.tui.screens.compare import CompareScreen  # loaded with /compare, not before the first frame

        for screen in self.screen_stack:
            if isinstance(screen, CompareScreen):
                screen.comparison.stop()
        if self.runs.running and not self.runs.compacting:
            self.session.interrupt()
        self.exit(return_code=128 + signum)

    def warn_opened(self, warnings: list[str]) -> None:
        """What opening the session found damaged, in one notice however much it is (the first, and a count)."""
        if not warnings:
            return
        more = (
            f" (and {plural(len(warnings) - 1, 'more problem')}: {command('tree', self.session.id)} lists them)"
            if len(warnings) > 1
            else ""
        )
        tell(self, warnings[0] + more, severity="warning", timeout=8)

    async def _show_history(self) -> None:
        """A resumed session: its earlier turns first, then the input is the next turn."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.state.tell(events)
        self.transcript.note(f"Resumed session {self.session.id}")
        self.conversation.redraw()
        self.history_shown.set()

    async def _show_branch(self, switched: Switched) -> None:
        """After a switch the conversation is the branch switched to: told again from the session, then the switch."""
        events = await asyncio.to_thread(branch_events, self.session.store)
        self.conversation.tell_again([*events, switched])
        self.history_shown.set()

    def events_shown(self, events: list[StepEvent]) -> None:
        """A batch of the bus's events is in the state and on screen: the parts act on it."""
        self.prompt.take_back()
        if self.session.demo and self.state.status.state != "idle":
            self.query_one(DemoBanner).folded = True
        if any(type(event) not in STREAMED for event in events):  # streamed words change no question, no plan
            self.answers.show()
        for event in events:
            match event:
                case Switched():
                    self.history_shown.clear()
                    self.run_worker(self._show_branch(event), group="history", exclusive=True, exit_on_error=False)
                case RunFinished():
                    self.runs.ended()
                    if self.query_one(TreePanel).has_class("-shown"):  # the run grew the tree
                        self.session_tree.load()
                case RunStarted():
                    for welcome in self.query(Welcome):  # the first task is sent: the conversation takes its place
                        welcome.remove()
                case _:
                    ev.ignored(event, NOT_ACTED_ON)

    def place(self) -> str:
        """Where the focus is, as the focus model names it (``tui.workbench.focus``)."""
        focused = self.focused
        for widget, name in ((QuestionPanel, "question"), (PlanPanel, "plan"), (TreePanel, "tree")):
            panels = self.query(widget)
            if focused is not None and any(p is focused or focused in p.walk_children() for p in panels):
                return name
        return "timeline" if isinstance(focused, TranscriptView) else "input"

    def footer_hints(self) -> list[tuple[str, str]]:
        """The keys of what has the focus: the input's from the command registry, a panel's its own."""
        place = self.place()
        if place == "input":
            return hints(self.facts())
        if self.focused is not None and self.focused.id == "plan-editor":  # (TextArea: imported when it opens)
            return [("ctrl+s", "use this plan"), ("esc", "keep the edit")]
        if isinstance(self.focused, Input):  # a line a panel asks for: a reason, a rule, a search, a name
            return [("enter", "done"), ("esc", "back")]
        return list(place_named(place).keys)

    def on_descendant_focus(self) -> None:
        self.show_keys()

    def show_keys(self) -> None:
        """Draw the footer again: the keys that work have changed (a run started or ended)."""
        with contextlib.suppress(NoMatches):  # no footer (the app is closing)
            self.query_one("#footer").refresh()

    # --- Textual's messages, each to its part ---------------------------------------------------

    async def on_bus_events(self, message: BusEvents) -> None:
        self.conversation.show(message.events)

    async def on_input_submitted(self, message: Input.Submitted) -> None:
        if isinstance(message.input, PromptInput):
            await self.prompt.submitted(message.value)

    def on_prompt_input_queued(self, message: PromptInput.Queued) -> None:
        self.prompt.queued(message.text)

    async def on_prompt_input_help_asked(self, _: PromptInput.HelpAsked) -> None:
        await self.commands.run("help")

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        """A click on a completion takes it."""
        if isinstance(message.option_list, CompletionList):
            self.query_one(PromptInput).take_completion(message.option_index)

    def on_transcript_view_left(self, _: TranscriptView.Left) -> None:
        self.prompt.focus()

    def on_transcript_view_typed_on(self, message: TranscriptView.TypedOn) -> None:
        self.prompt.focus()
        self.prompt.input.insert_text_at_cursor(message.character)

    def on_transcript_view_open_output(self, message: TranscriptView.OpenOutput) -> None:
        self.conversation.open_output(message.entry, self.session.env.spill_dir)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.state == WorkerState.ERROR:
            self.runs.failed(event.worker.error)

    # --- the commands: keys, the palette and panels come here (``CommandHost``) -----------------

    def facts(self) -> Facts:
        return self.commands.facts()

    async def run_command(self, name: str, argument: str = "") -> bool:
        return await self.commands.run(name, argument)

    async def action_command(self, name: str) -> None:
        await self.commands.run(name)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.commands.check(action, parameters)

    def prefill(self, text: str) -> None:
        self.prompt.prefill(text)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own palette commands, less those the registry has (theme, quit, keys)."""
        return (c for c in super().get_system_commands(screen) if c.title not in _REGISTRY_HAS)

    # --- closing --------------------------------------------------------------------------------

    def resume_hint(self) -> str:
        """What the terminal says after the app exits: how to come back to this session (nothing for the demo,
        or for a session that never got a task and so was never kept)."""
        store = self.session.store
        if self.session.demo or not len(store.tree) or not store.folder.exists():
            return ""
        return f"Resume this session: chimera --resume {self.session.id}"

    async def on_unmount(self) -> None:
        self.theme_keeper.stop()
        self.conversation.close()
        await self.session.close()


def build_app(options: RunOptions, *, demo_pace: float = DEMO_PACE) -> ChimeraApp:
    """Prepare the session for ``options`` (raising ConfigError on bad input) and build the app."""
    session = start_session(replace(options, demo_pace=demo_pace, interactive=True))
    return ChimeraApp(session, options)
