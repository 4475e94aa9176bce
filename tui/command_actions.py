"""Provides ``CommandActions``: the workbench's commands (``tui.commands``) run on the app, and its runs.

Every way in (a typed ``/name``, a key, the palette) comes to :meth:`CommandActions.run_command`,
which runs the command only when it works now and otherwise says why in one line; each command is an
``action_<id>`` here. The runs themselves (a task, a compaction, an interrupt) are here too, since
commands start and stop them.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import ClassVar, TypeVar

from textual import work
from textual.app import App, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import Provider
from textual.css.query import NoMatches
from textual.screen import Screen

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.providers.factory import DEFAULT_MODEL, resolve_model
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions
from chimera.core.terminal_text import terminal_safe
from chimera.tui.command_views import WorkbenchCommands, command_bindings
from chimera.tui.commands import Completion, Facts, available, complete, find, unknown
from chimera.tui.outside import tell
from chimera.tui.question_app import QuestionApp
from chimera.tui.screens.help import HelpScreen, Row
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.widgets.transcript_view import TranscriptView

__all__ = ["CommandActions"]

_REGISTRY_HAS = {"Theme", "Quit", "Keys"}  # Textual's own palette commands the registry replaces
_TYPING: list[Row] = [
    ("enter", "", "Send a task; while a run works, steer it (read after its current step)"),
    ("tab", "", "Queue what is typed as the next task; on a /command, take the completion"),
    ("ctrl+j", "", "A new line in the message, shown as ⏎ (shift+enter too, where the terminal tells it apart)"),
    ("//", "", "Start with // to send words that begin with a slash (//etc/hosts sends /etc/hosts)"),
]


_T = TypeVar("_T")


class CommandActions(QuestionApp):
    """The commands of the workbench over one session."""

    BINDINGS: ClassVar[list[BindingType]] = list(command_bindings())
    COMMANDS: ClassVar[set[type[Provider] | Callable[[], type[Provider]]]] = App.COMMANDS | {WorkbenchCommands}

    def __init__(self, session: Session, options: RunOptions) -> None:
        super().__init__(session)
        self.options = options
        self._working = False
        self.compacting = False  # a summary asked between runs (a compaction, a branch left behind) works
        self.stopped_note = ""  # what stopping it says
        self.run_shown = asyncio.Event()  # the run's end is on screen and the next task can be sent
        self.end_shown = False  # the run's end is on screen (its worker may still be finishing)

    # --- the registry, on the app ---------------------------------------------------------

    def facts(self) -> Facts:
        """What decides which commands work now."""
        return Facts(
            state=self.state,
            running=self.running,
            demo=self.session.demo,
            recorded=len(self.session.store.tree) > 0,
            themes=tuple(sorted(self.available_themes)),
            models=tuple(dict.fromkeys([self.session.model, resolve_model(), DEFAULT_MODEL])),
            kept=len(self.session.kept),
        )

    def complete(self, text: str) -> list[Completion]:
        return complete(text, self.facts())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A command's keys act only while it works (otherwise they are shown dimmed and left to others)."""
        if action == "command" and parameters:
            command = find(str(parameters[0]))
            return None if command is None or not command.enabled(self.facts()) else True
        return True

    async def action_command(self, name: str) -> None:
        await self.run_command(name)

    async def run_command(self, name: str, argument: str = "") -> bool:
        """Run command ``name`` with ``argument``: typed, keyed or chosen in the palette alike. False, and one
        line saying why and what to do, when it does not run (unknown, not now, an argument missing or bad)."""
        command = find(name)
        if command is None:
            return self._refuse(unknown(name))
        why = command.unavailable(self.facts())
        if why:
            return self._refuse(f"{command.slash} {why}")
        if command.needs_argument and not argument:
            choices = command.choices(self.facts())
            which = f"one of {', '.join(choices)}" if choices else f"type {command.usage}"
            return self._refuse(f"{command.slash} needs {command.argument}: {which}.")
        if argument and not command.argument:
            return self._refuse(f"{command.slash} takes nothing after it: send {command.slash} alone.")
        method = getattr(self, command.method)
        done = method(argument) if command.argument else method()
        if inspect.isawaitable(done):
            done = await done
        return done is not False

    def _refuse(self, line: str) -> bool:
        tell(self, line, one_line=True, severity="warning", timeout=6)
        return False

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's own palette commands, less those the registry has (theme, quit, keys)."""
        return (c for c in super().get_system_commands(screen) if c.title not in _REGISTRY_HAS)

    # --- the commands ---------------------------------------------------------------------

    def action_help(self) -> None:
        if isinstance(self.screen, HelpScreen):
            self.screen.dismiss()
            return
        commands = [(c.key_display or c.keys, c.usage, c.help) for c in available(self.facts())]
        timeline = [
            (b.key.replace(",", "/"), "", b.description)
            for b in TranscriptView.BINDINGS
            if isinstance(b, Binding) and b.show
        ]
        self.push_screen(
            HelpScreen(
                [("Commands", commands), ("Typing", _TYPING), ("The timeline (tab from an empty input)", timeline)]
            )
        )

    def action_plan(self, task: str) -> None:
        self.start_run(task, loop="plan")

    def action_approve(self) -> None:
        self.query_one(PlanPanel).approve()  # the edit kept in the panel, when there is one

    def action_cancel(self) -> None:
        self.cancel_plan()

    def action_edit(self) -> None:
        self.edit_plan()

    def action_keep_planning(self, changes: str) -> None:
        self.keep_planning(changes)

    def action_question(self) -> None:
        self.go_to_question()

    def action_allow(self) -> None:
        self.answer_permission("allow")

    def action_always(self) -> None:
        self.answer_permission("always")

    def action_always_rule(self, rule: str) -> None:
        self.always_with_rule(rule)

    def action_deny(self) -> None:
        self.answer_permission("deny")

    def action_deny_why(self, reason: str) -> None:
        if reason.strip():
            self.answer_permission("deny", reason.strip())
        else:
            self.go_to_question()
            self.query_one(QuestionPanel).ask_reason()

    def action_loop(self, name: str) -> bool:
        return self._configure("loop", "strategy", loop=name)

    def action_model(self, name: str) -> bool:
        return self._configure("model", "model", model=name)

    def action_mode(self, name: str) -> bool:
        """``/mode NAME`` chooses the mode; ``/mode`` alone shows it and the answers kept by "always";
        ``/mode forget N`` takes the N-th of those back."""
        words = name.split()
        if not words:
            return self._show_kept()
        if words[0] == "forget":
            number = words[1] if len(words) == 2 else ""
            if not number.isdigit():
                return self._refuse("/mode forget takes the number of a kept answer: /mode lists them.")
            try:
                gone = self.session.forget(int(number))
            except ConfigError as err:
                return self._refuse(f"/mode forget: {err}")
            self.say(terminal_safe(f"Asked again from now on: {gone}.", one_line=True))
            return True
        return self._configure("mode", "permission mode", mode=name)

    def _show_kept(self) -> bool:
        kept = self.session.kept
        lines = [f"Permission mode {self.session.policy.mode}."]
        if kept:
            lines.append('Allowed unasked by an "always" this session (/mode forget N takes one back):')
            lines += [f"  {n}. {terminal_safe(words, one_line=True)}" for n, words in enumerate(kept, start=1)]
        else:
            lines.append('No "always" answered this session.')
        self.say("\n".join(lines))
        return True

    def _configure(self, command: str, what: str, **choice: str) -> bool:
        try:
            self.session.configure(**choice)
        except ConfigError as err:
            return self._refuse(f"/{command}: {err}")
        self.show_status(model=self.session.model, loop=self.session.loop_name, mode=self.session.policy.mode)
        tell(self, f"The next runs use the {what} {next(iter(choice.values()))}.", one_line=True)
        return True

    def action_theme(self, name: str) -> bool:
        known = self.available_themes
        if name not in known and f"chimera-{name}" not in known:
            return self._refuse(f"/theme {name} is not a theme here: one of {', '.join(sorted(known))}.")
        self.switch_theme(name)  # ``dark`` is chimera-dark; the choice is remembered
        return True

    def action_compact(self, focus: str) -> None:
        self.compact_conversation(focus)

    def action_interrupt(self) -> None:
        """Stop the run: the stream ends, tools are killed, the conversation stays valid."""
        if self.compacting:  # nothing is recorded until the summary is in: stopping loses nothing
            self.workers.cancel_group(self, "run")
            self.show_status(state="interrupted")
            tell(self, self.stopped_note, timeout=3)
        elif self.running:
            self.session.interrupt()  # words the run never read come back as events (see events_shown)
            unsent = self.session.take_follow_ups()
            self.state.follow_ups = []
            if unsent:  # tasks queued after the run go back to the input
                prompt = self.query_one(PromptInput)
                prompt.value = " ".join([*unsent, prompt.value]).strip()
            tell(self, "Interrupting…", timeout=2)

    # --- runs -----------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        """Whether a run works (or a comparison, or a summary between runs): the session's other commands wait."""
        return self._working

    @running.setter
    def running(self, running: bool) -> None:
        self._working = running
        self.show_keys()
        with contextlib.suppress(NoMatches):  # no input (the app is closing)
            # Still while a run works: a blink is a screen update of its own, twice a second, among the run's.
            self.query_one(PromptInput).cursor_blink = not running

    def start_run(self, task: str, *, loop: str | None = None) -> None:
        """Run ``task`` (with strategy ``loop`` for it alone, when given)."""
        self.running = True
        self.run_shown.clear()
        self.end_shown = False
        self.run_task(task, loop)

    @work(exclusive=True, group="run", exit_on_error=False)
    async def run_task(self, task: str, loop: str | None = None) -> None:
        try:
            await self.session.run(task, loop=loop)
        finally:
            self.running = False
            self.run_over()

    def run_over(self) -> None:
        """Once the run's end is on screen and its worker is done (either may come first), the run is over."""
        if self.end_shown and not self.running:
            self.run_shown.set()

    def show_keys(self) -> None:
        """Draw the footer again: the keys that work have changed (a run started or ended)."""
        with contextlib.suppress(NoMatches):  # no footer (the app is closing)
            self.query_one("#footer").refresh()

    async def aside(self, state: str, stopped: str, request: Awaitable[_T]) -> _T | ChimeraError:
        """A model request between runs (a compaction, a branch's summary) in a ``run`` worker: the status line
        spins ``state`` with its time, escape stops it (saying ``stopped``: nothing is kept until it is in), the
        keys wait for it. Its result, or the error it ended in."""
        self.compacting = self.running = True
        self.stopped_note = stopped
        self.state.status.begin(state)
        self.show_status()
        try:
            return await request
        except ChimeraError as err:
            return err
        finally:
            self.compacting = self.running = False

    @work(exclusive=True, group="run", exit_on_error=False)
    async def compact_conversation(self, focus: str) -> None:
        """``/compact [focus]``: summarize the older part of the conversation now."""
        stopped = "Compaction stopped: the conversation is as it was."
        done = await self.aside("compacting", stopped, self.session.compact(focus))
        if isinstance(done, ChimeraError):
            self.say(f"✗ compaction failed: {done}", "error")
            self.show_status(state="failed")
            return
        self.show_status(state="idle")
        if done is None:
            tell(self, "Nothing to compact: the conversation is still short.", timeout=4)
