"""Provides ``ChimeraApp``, the workbench, and ``build_app``, the factory the CLI and tests share.

The app is thin: it composes the screen and holds the parts that act, each an object with the ``Session`` it
acts through (``tui.workbench``): the conversation drawn from the bus (``Conversation``), the runs
(``Runs``), the answers to questions (``Answers``), the input (``Prompt``), the commands (``CommandRunner``),
the sessions (``Sessions``) and the session's tree (``SessionTree``). Textual's messages come to the app and
go on to the part they concern. The core is reached only through the ``Session`` and its bus. What is typed
goes to the model as a task or as steering, unless it starts with a slash: then it is a command
(``tui.commands``), and never reaches the model. Where the focus may be, and how it moves, is written down in
``tui.workbench.focus``.

The ``chimera`` command draws the first frame before the session is open (``build_app(..., open_later=True)``):
the welcome, the status line, the input and the footer come from the session's ``Opening`` (what it will be,
known cheaply), and the session opens right after, off the event loop; the tree panel and the bus come with it.
What is sent meanwhile (a task, a command) waits for it and then goes as if sent then; ctrl+q quits at once.
Only what the first frame draws is imported here: the session's own modules load as it opens.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from textual import events
from textual.actions import SkipAction
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, OptionList
from textual.worker import Worker, WorkerState

from chimera.core.errors import ChimeraError
from chimera.core.gc_pause import started
from chimera.core.providers.choice import DEFAULT_MODEL, resolve_model
from chimera.core.sessions.opening import Opening, RunOptions, opening
from chimera.core.terminal_text import is_blank
from chimera.core.wording import command, plural, shown_path
from chimera.themes import APP_CSS
from chimera.tui.command_views import WorkbenchCommands, command_bindings
from chimera.tui.commands import Completion, Facts, complete, find
from chimera.tui.hangup import let_go_of_gone_streams
from chimera.tui.messages import BusEvents
from chimera.tui.outside import tell
from chimera.tui.state import Transcript, WorkbenchState
from chimera.tui.terminal_input import PasteKeepingDriver
from chimera.tui.theme_keeper import ThemeKeeper
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.key_footer import KeyFooter
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.widgets.welcome import Welcome
from chimera.tui.workbench.focus import FOCUS_KEYS, move_to
from chimera.tui.workbench.keys import Keys
from chimera.tui.workbench.opener import Opener
from chimera.tui.workbench.reactions import Reactions

if TYPE_CHECKING:  # loaded with the session, after the first frame (``_make_parts``, ``_panels``)
    from chimera.core.sessions.session import Session
    from chimera.tui.widgets.transcript_view import TranscriptView
    from chimera.tui.workbench.answers import Answers
    from chimera.tui.workbench.command_runner import CommandRunner
    from chimera.tui.workbench.conversation import Conversation
    from chimera.tui.workbench.mcp import McpPart
    from chimera.tui.workbench.prompt import Prompt
    from chimera.tui.workbench.runs import Runs
    from chimera.tui.workbench.session_tree import SessionTree
    from chimera.tui.workbench.sessions import Sessions

__all__ = ["ChimeraApp", "build_app"]

DEMO_PACE = 0.02  # seconds between streamed words when the demo plays on screen


_REGISTRY_HAS = {"Theme", "Quit", "Keys"}  # Textual's own palette commands the registry replaces


class ChimeraApp(App[int]):
    """The workbench: a conversation, an input and a status line over one session."""

    # The parts: made with the session (``_make_parts``), so they are there whenever ``is_open``.
    conversation: Conversation
    runs: Runs
    answers: Answers
    prompt: Prompt
    sessions: Sessions
    session_tree: SessionTree
    mcp: McpPart
    commands: CommandRunner

    CSS_PATH = APP_CSS
    TITLE = "Chimera"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (120, "-wide")]  # noqa: RUF012 (Textual's): the plan above, or beside
    BINDINGS: ClassVar[list[BindingType]] = [
        *command_bindings(),
        # tab from the empty input: the app's, so keys typed right after it reach the timeline (see FOCUS_KEYS).
        *(Binding(key, action, show=False, priority=True) for key, action in FOCUS_KEYS.items()),
    ]
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = App.COMMANDS | {WorkbenchCommands}

    def __init__(self, start: Opening, session: Session | None = None) -> None:
        """The workbench over ``session``; with none, ``start``'s session opens after the first frame."""
        super().__init__()
        self.start = start
        self.options = start.options
        self._session = session
        self.opener = Opener(self)  # the session opening after the first frame, and what is sent meanwhile
        self.opened = asyncio.Event()  # set once the session is open and the workbench drives it
        self.state = WorkbenchState()  # everything the screen shows, built from the bus's events
        self.theme_keeper = ThemeKeeper(self)
        self.reactions = Reactions(self)  # what the parts do once the bus's events are on screen
        self.keys = Keys(self)  # where keys go before Textual hands them on, and where the focus is
        if session is not None:
            self._make_parts()

    def _make_parts(self) -> None:
        from chimera.tui.workbench.answers import Answers
        from chimera.tui.workbench.command_runner import CommandRunner
        from chimera.tui.workbench.conversation import Conversation
        from chimera.tui.workbench.mcp import McpPart
        from chimera.tui.workbench.prompt import Prompt
        from chimera.tui.workbench.runs import Runs
        from chimera.tui.workbench.session_tree import SessionTree
        from chimera.tui.workbench.sessions import Sessions

        self.conversation = Conversation(self, self.state, on_shown=self.reactions.shown)
        self.runs = Runs(self)
        self.answers = Answers(self)
        self.prompt = Prompt(self)
        self.sessions = Sessions(self)
        self.session_tree = SessionTree(self)
        self.mcp = McpPart(self)
        self.commands = CommandRunner(self, [self.runs, self.answers, self.sessions, self.session_tree, self.mcp])

    # --- what the parts and the tests read ---------------------------------------------------

    @property
    def session(self) -> Session:
        """The open session (only what the first frame draws comes before it: see ``is_open``)."""
        if self._session is None:
            raise RuntimeError("the session is not open yet")
        return self._session

    @session.setter
    def session(self, session: Session) -> None:
        self._session = session

    @property
    def is_open(self) -> bool:
        return self._session is not None

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
        return self.is_open and self.runs.running

    @property
    def history_shown(self) -> asyncio.Event:
        """Set once a resumed session's history, or the branch switched to, is on screen."""
        return self.reactions.history_shown

    @property
    def open_error(self) -> ChimeraError | OSError | None:
        """Why the session could not open (the app ended), or None."""
        return self.opener.error

    @property
    def resume_next(self) -> str | None:
        """A session chosen here (``/sessions``), opened when this one closes."""
        return self.sessions.resume_next if self.is_open else None

    # --- the screen ---------------------------------------------------------------------------

    async def on_event(self, event: events.Event) -> None:
        """Keys and pastes go where the focus model says before Textual hands them on (``workbench.keys``)."""
        if self.keys.used_up(event):
            return
        await super().on_event(event)

    async def on_prompt_input_acted(self, _: PromptInput.Acted) -> None:
        """The input has acted on an enter or a ``?``: the keys held behind it go on."""
        await self.keys.release()

    async def on_transcript_view_acted(self, _: TranscriptView.Acted) -> None:
        """The timeline has acted on its ``o``: the keys held behind it go on."""
        await self.keys.release()

    def get_driver_class(self) -> type[Driver]:
        """Textual's driver for this terminal, or for a browser tab; on POSIX and in a tab, one that takes a
        bracketed paste whole (ESC and all)."""
        driver = super().get_driver_class()
        if driver is LinuxDriver:
            return PasteKeepingDriver
        if f"{driver.__module__}.{driver.__name__}" == "textual.drivers.web_driver.WebDriver":  # chimera serve's tab
            from chimera.tui.web_input import PasteKeepingWebDriver

            return PasteKeepingWebDriver
        return driver

    def compose(self) -> ComposeResult:
        """The whole workbench over an open session; before it opens, its first frame: the welcome (or the
        demo's banner), the status line, the input and the footer (``take_session`` mounts the rest)."""
        start = self.start
        if start.demo:
            from chimera.tui.widgets.demo_banner import DemoBanner

            yield DemoBanner(id="demo-banner")
        if not start.demo and not start.resume:  # a new session: how to start, until its first task
            yield Welcome.opening(start, self.facts())
        with Horizontal(id="middle"):
            if self.is_open:
                yield from self._panels()
        if self.is_open:
            yield self._question_panel()  # above the input, the conversation still on screen above it
        yield StatusLine(self.state.status, id="status")
        yield CompletionList(id="completions")
        yield PromptInput(completer=self._complete)
        yield KeyFooter(self.footer_hints, id="footer")

    def _panels(self) -> list[Widget]:
        """The conversation, the plan and the tree (beside each other, or above: the plan's CSS says)."""
        from chimera.tui.widgets.plan_panel import PlanPanel
        from chimera.tui.widgets.transcript_view import TranscriptView
        from chimera.tui.widgets.tree_panel import TreePanel

        return [
            TranscriptView(self.transcript, id="conversation"),
            PlanPanel(self.state.plan, self.answers, id="plan"),
            TreePanel(self.session_tree, id="tree"),
        ]

    def _question_panel(self) -> Widget:
        from chimera.tui.widgets.question_panel import QuestionPanel

        return QuestionPanel(self.answers, id="question")

    def on_load(self) -> None:
        self.theme_keeper.start()  # before the stylesheet is first parsed: it is parsed once, in the right colours

    def on_mount(self) -> None:
        start = self.start
        self._show_status(model=start.model or "", loop=start.strategy, strategy=start.strategy, mode=start.mode)
        if start.workdir is not None:
            self._show_status(workspace=shown_path(start.workdir))
        move_to(self.query_one(PromptInput))
        self._stop_on_signals()
        self.call_after_refresh(started)  # the collector, paused while the workbench started, runs again
        if self._session is not None:
            self.take_session(self._session)
        else:  # the first frame first, then the session
            self.call_after_refresh(self.opener.begin)

    def take_session(self, session: Session) -> None:
        """The session is open: the workbench shows and drives it."""
        self.query("#lock-wait").remove()
        if self._session is None:  # (the first frame was drawn without it)
            self.session = session
            self._make_parts()
            self.query_one("#middle").mount_all(self._panels())
            self.mount(self._question_panel(), before="#status")
        self.conversation.show_status(
            model=session.model, loop=session.loop_name, strategy=session.loop_name, mode=session.policy.mode
        )
        self.conversation.show_status(workspace=shown_path(session.env.workdir))
        if not session.demo:  # the demo replays a recording in a copy of its own: nothing of yours to guard
            from chimera.core.sandbox.choice import in_words  # the sandbox's modules load with the first command

            self.conversation.show_status(sandbox=in_words(session.policy.sandbox)[0])
        if self.options.resume:
            self.conversation.show_status(session=session.id)
        self.conversation.show_bus(session.bus)
        self.warn_opened(session.warnings)
        self.call_after_refresh(self.mcp.started)  # the MCP servers start once the first frame is on screen
        self.opened.set()
        self.show_keys()
        if session.demo:
            from chimera.core.demo import DEMO_NOTICE

            self.conversation.say(DEMO_NOTICE, "warning")  # the banner folds to one line as the demo starts
            self.runs.start(session.demo_task)
        elif self.options.resume:
            self.run_worker(self.reactions.show_history(), group="history", exit_on_error=False)

    def _show_status(self, **fields: object) -> None:
        """The status line's fields, before the session is open (then ``conversation.show_status``)."""
        for name, value in fields.items():
            setattr(self.state.status, name, value)
        self.query_one(StatusLine).refresh()

    def _complete(self, text: str) -> list[Completion]:
        return self.commands.complete(text) if self.is_open else complete(text, self.facts())

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
        if self.running and not self.runs.compacting:
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

    def place(self) -> str:
        """Where the focus is, as the focus model names it (``tui.workbench.focus``)."""
        return self.keys.place()

    def footer_hints(self) -> list[tuple[str, str]]:
        """The keys of what has the focus (the footer's)."""
        return self.keys.footer_hints()

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
        if not isinstance(message.input, PromptInput):
            return
        if self.is_open:
            await self.prompt.submitted(message.value)
        else:
            self.opener.sent(message.value)

    def on_prompt_input_queued(self, message: PromptInput.Queued) -> None:
        if self.is_open:
            self.prompt.queued(message.text)
        else:  # (so it is: the words stay in the input)
            tell(self, "Nothing is running: press enter to send it now.", timeout=3)

    async def on_prompt_input_help_asked(self, _: PromptInput.HelpAsked) -> None:
        await self.run_command("help")

    def on_option_list_option_selected(self, message: OptionList.OptionSelected) -> None:
        """A click on a completion takes it."""
        if isinstance(message.option_list, CompletionList):
            self.query_one(PromptInput).take_completion(message.option_index)

    def action_leave_input(self) -> None:
        """``tab`` in the empty input: the focus moves on (to the timeline) at once. Anywhere else, or with words
        in the input (tab queues them), the key goes on to what has the focus."""
        prompt = self.focused
        if not isinstance(prompt, PromptInput) or not is_blank(prompt.value):
            raise SkipAction
        self.screen.focus_next()

    def on_transcript_view_left(self, _: TranscriptView.Left) -> None:
        self.prompt.focus()

    def on_transcript_view_typed_on(self, message: TranscriptView.TypedOn) -> None:
        self.prompt.focus()
        self.prompt.input.insert_text_at_cursor(message.character)

    async def on_transcript_view_open_output(self, message: TranscriptView.OpenOutput) -> None:
        await self.conversation.open_output(message.entry, self.session.env.spill_dir)

    async def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "run" and event.state == WorkerState.ERROR:
            self.runs.failed(event.worker.error)

    # --- the commands: keys, the palette and panels come here (``CommandHost``) -----------------

    def facts(self) -> Facts:
        if self.is_open:
            return self.commands.facts()
        start = self.start  # a new session, opening: nothing recorded, kept or named yet
        return Facts(
            state=self.state,
            demo=start.demo,
            themes=tuple(sorted(self.available_themes)),
            models=tuple(dict.fromkeys([start.model or resolve_model(), resolve_model(), DEFAULT_MODEL])),
        )

    async def run_command(self, name: str, argument: str = "") -> bool:
        """Run command ``name``; before the session is open, ``quit`` quits and the rest runs once it is."""
        if self.is_open:
            return await self.commands.run(name, argument)
        if name == "quit":
            self.exit()
        else:
            self.opener.when_open(lambda: self.commands.run(name, argument))
        return True

    async def action_command(self, name: str) -> None:
        await self.run_command(name)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.is_open:
            return self.commands.check(action, parameters)
        if action == "command" and parameters:  # (as ``CommandRunner.check``, from the opening's facts)
            found = find(str(parameters[0]))
            return None if found is None or not found.enabled(self.facts()) else True
        return True

    def prefill(self, text: str) -> None:
        self.prompt.prefill(text)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own palette commands, less those the registry has (theme, quit, keys)."""
        return (c for c in super().get_system_commands(screen) if c.title not in _REGISTRY_HAS)

    # --- closing --------------------------------------------------------------------------------

    def resume_hint(self) -> str:
        """What the terminal says after the app exits: how to come back to this session (nothing for the demo,
        or for a session that never got a task and so was never kept)."""
        if self._session is None:  # closed before it opened: nothing was kept
            return ""
        store = self.session.store
        if self.session.demo or not len(store.tree) or not store.folder.exists():
            return ""
        return f"Resume this session: chimera --resume {self.session.id}"

    async def on_unmount(self) -> None:
        self.theme_keeper.stop()
        if self.is_open:
            self.conversation.close()
        session = self._session or await self.opener.close()  # quit while it opened: it closes once open, unused
        if session is not None:
            await session.close()


def build_app(options: RunOptions, *, demo_pace: float = DEMO_PACE, open_later: bool = False) -> ChimeraApp:
    """The workbench for ``options`` (ConfigError on bad input that shows before anything opens). The session
    opens here, or with ``open_later`` (the ``chimera`` command's way) after the workbench's first frame."""
    start = opening(replace(options, demo_pace=demo_pace, interactive=True))
    if open_later:
        return ChimeraApp(start)
    from chimera.core.sessions.start import start_session

    return ChimeraApp(start, start_session(start.options, start))
