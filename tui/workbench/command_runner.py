"""Provides ``CommandRunner``: the workbench's commands (``tui.commands``) run by their handlers in the parts.

Every way in (a typed ``/name``, a key, the palette) comes to :meth:`CommandRunner.run`, which runs the command
only when it works now and otherwise says why in one line. Each part of the workbench hands the runner the
commands it answers (``commands()``: id to handler); every command of the registry has exactly one. The
commands about settings (``/loop``, ``/model``, ``/mode``, ``/theme``) and the help are answered here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.binding import Binding

from chimera.core.errors import ConfigError
from chimera.core.providers.factory import DEFAULT_MODEL, known_model, resolve_model
from chimera.tui.commands import COMMANDS, Completion, Facts, available, complete, find, unknown
from chimera.tui.outside import tell
from chimera.tui.screens.help import HelpScreen, Row
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.workbench.focus import open_screen

if TYPE_CHECKING:
    from chimera.tui.app import ChimeraApp

__all__ = ["CommandRunner"]

_TYPING: list[Row] = [
    ("enter", "", "Send a task; while a run works, steer it (read after its current step)"),
    ("tab", "", "Queue what is typed as the next task; on a /command, take the completion"),
    ("ctrl+j", "", "A new line in the message, shown as ⏎ (shift+enter too, where the terminal tells it apart)"),
    ("//", "", "Start with // to send words that begin with a slash (//etc/hosts sends /etc/hosts)"),
]

Handler = Callable[..., Any]


class CommandRunner:
    """The registry's commands, each run by the part that answers it."""

    def __init__(self, app: ChimeraApp, parts: list[Any]) -> None:
        self.app = app
        self.handlers: dict[str, Handler] = {}
        for part in [self, *parts]:
            for name, handler in part.commands().items():
                if name in self.handlers:
                    raise ValueError(f"two parts answer the command {name!r}")
                self.handlers[name] = handler
        missing = [c.id for c in COMMANDS if c.id not in self.handlers]
        if missing:
            raise ValueError(f"no part answers the commands {missing}")

    def commands(self) -> dict[str, Handler]:
        return {
            "help": self.help,
            "loop": lambda name: self._configure("loop", "strategy", loop=name),
            "model": self.model,
            "mode": self.mode,
            "theme": self.theme,
            "quit": self.app.exit,
        }

    # --- the registry, on the app ---------------------------------------------------------

    def facts(self) -> Facts:
        """What decides which commands work now."""
        app = self.app
        session = app.session
        return Facts(
            state=app.state,
            running=app.runs.running,
            demo=session.demo,
            recorded=len(session.store.tree) > 0,
            themes=tuple(sorted(app.available_themes)),
            models=tuple(dict.fromkeys([session.model, resolve_model(), DEFAULT_MODEL])),
            kept=tuple(session.kept_numbers),
            points=app.session_tree.points(),
            mcp=tuple((c.name, c.config.enabled) for c in session.mcp.connections) if session.mcp else (),
        )

    def complete(self, text: str) -> list[Completion]:
        return complete(text, self.facts())

    def check(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A command's keys act only while it works (otherwise they are shown dimmed and left to others)."""
        if action == "command" and parameters:
            command = find(str(parameters[0]))
            return None if command is None or not command.enabled(self.facts()) else True
        return True

    async def run(self, name: str, argument: str = "") -> bool:
        """Run command ``name`` with ``argument``: typed, keyed or chosen in the palette alike. False, and one
        line saying why and what to do, when it does not run (unknown, not now, an argument missing or bad)."""
        command = find(name)
        if command is None:
            return self.refuse(unknown(name))
        why = command.unavailable(self.facts())
        if why:
            return self.refuse(f"{command.slash} {why}")
        if command.needs_argument and not argument:
            choices = command.choices(self.facts())
            if command.open_choice:  # the completions are examples: any name may do
                such = f", such as {', '.join(choices)}" if choices else ""
                which = f"{command.open_choice}{such}"
            else:
                which = f"one of {', '.join(choices)}" if choices else f"type {command.usage}"
            return self.refuse(f"{command.slash} needs {command.argument}: {which}.")
        if argument and not command.argument:
            return self.refuse(f"{command.slash} takes nothing after it: send {command.slash} alone.")
        handler = self.handlers[command.id]
        done = handler(argument) if command.argument else handler()
        if inspect.isawaitable(done):
            done = await done
        return done is not False

    def refuse(self, line: str) -> bool:
        """Say in one line why a command did not run (and what to do); False."""
        tell(self.app, line, one_line=True, severity="warning", timeout=6)
        return False

    # --- the commands ---------------------------------------------------------------------

    async def help(self) -> None:
        app = self.app
        if isinstance(app.screen, HelpScreen):
            app.screen.dismiss()
            return
        commands = [(c.key_display or c.keys, c.usage, c.help) for c in available(self.facts())]
        timeline = [
            (b.key.replace(",", "/"), "", b.description)
            for b in TranscriptView.BINDINGS
            if isinstance(b, Binding) and b.show
        ]
        sections = [("Commands", commands), ("Typing", _TYPING), ("The timeline (tab from an empty input)", timeline)]
        await open_screen(app, HelpScreen([*sections, ("MCP servers (/mcp)", app.mcp.help_rows())]))

    def mode(self, name: str) -> bool:
        """``/mode NAME`` chooses the mode; ``/mode`` alone shows it and the answers kept by "always";
        ``/mode forget N`` takes the N-th of those back."""
        words = name.split()
        if not words:
            return self._show_kept()
        if words[0] == "forget":
            number = words[1] if len(words) == 2 else ""
            if not number.isdigit():
                return self.refuse("/mode forget takes the number of a kept answer: /mode lists them.")
            try:
                gone = self.app.session.forget(int(number))
            except ConfigError as err:
                return self.refuse(f"/mode forget: {err}")
            # What was taken back, and the rest as they are now: each keeps its number, as /mode forget takes it.
            rest = self._kept_lines('Still allowed unasked by an "always"', 'No "always" is kept now.')
            self.app.conversation.say("\n".join([f"Asked again from now on: {gone}.", *rest]))
            return True
        return self._configure("mode", "permission mode", mode=name)

    def _show_kept(self) -> bool:
        session = self.app.session
        kept = self._kept_lines('Allowed unasked by an "always" this session', 'No "always" answered this session.')
        from chimera.core.sandbox.choice import in_words

        _, sandbox = in_words(session.policy.sandbox)
        self.app.conversation.say("\n".join([f"Permission mode {session.policy.mode}. {sandbox}", *kept]))
        return True

    def _kept_lines(self, title: str, none: str) -> list[str]:
        """The answers kept by "always", each under its number (the one ``/mode forget N`` takes), or ``none``."""
        kept = self.app.session.kept_numbers
        if not kept:
            return [none]
        return [f"{title} (/mode forget N takes one back):", *(f"  {n}. {words}" for n, words in kept.items())]

    def model(self, name: str) -> bool:
        """``/model NAME``: any name is used (a local server's model is none Chimera knows), but one Chimera does
        not know is said so, with how to go back: a slip of the keys does not take effect unseen."""
        before, name = self.app.session.model, name.strip()
        if known_model(name):
            return self._configure("model", "model", model=name)
        back = f"/model {before} goes back" if before != name else f"/model {DEFAULT_MODEL} chooses the default"
        warning = f"{name} is not a model Chimera knows (its cost is not counted): the next runs use it anyway; {back}."
        return self._configure("model", "model", warning, model=name)

    def _configure(self, command: str, what: str, warning: str = "", **choice: str) -> bool:
        """Choose what the next runs use; say so (or ``warning``, when given, instead)."""
        session = self.app.session
        try:
            session.configure(**choice)
        except ConfigError as err:
            return self.refuse(f"/{command}: {err}")
        self.app.conversation.show_status(
            model=session.model, loop=session.loop_name, strategy=session.loop_name, mode=session.policy.mode
        )
        if warning:
            tell(self.app, warning, one_line=True, severity="warning", timeout=10)
        else:
            tell(self.app, f"The next runs use the {what} {next(iter(choice.values()))}.", one_line=True)
        return True

    def theme(self, name: str) -> bool:
        known = self.app.available_themes
        if name not in known and f"chimera-{name}" not in known:
            return self.refuse(f"/theme {name} is not a theme here: one of {', '.join(sorted(known))}.")
        self.app.theme_keeper.switch(name)  # ``dark`` is chimera-dark; the choice is remembered
        return True
