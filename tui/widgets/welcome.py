"""Provides ``Welcome``: what a new workbench shows before its first task.

The workspace, the model (or that this is the demo), the strategy and the permission mode, then the few
keys and commands to know, read from the command registry (``tui.commands``) so they are the ones that
work. The app removes it once the first task is sent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.console import Group
from rich.style import Style
from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import shown_path
from chimera.tui.commands import Facts, find, key_hints

if TYPE_CHECKING:
    from chimera.core.sessions.opening import Opening
    from chimera.core.sessions.session import Session

__all__ = ["WELCOME_COMMANDS", "Welcome"]

WELCOME_COMMANDS = ("plan", "loop", "model", "mode", "sessions")  # the commands a newcomer should know


class Welcome(Static):
    """A short welcome: where Chimera works, with what, and how to start."""

    workspace: reactive[str] = reactive("", layout=True)  # shown as given (a new value draws it again)

    COMPONENT_CLASSES: ClassVar[set[str]] = {"welcome--title", "welcome--key"}

    DEFAULT_CSS = """
    Welcome {
        height: auto;
        padding: 1 2;
        color: $text-muted;
    }
    Welcome > .welcome--title { color: $primary; text-style: bold; }
    Welcome > .welcome--key { color: $accent; text-style: bold; }
    """

    def __init__(
        self, workspace: str, model: str, loop: str, mode: str, facts: Facts, *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        self.workspace, self.model, self.loop, self.mode, self.facts = workspace, model, loop, mode, facts

    @classmethod
    def of(cls, session: Session, facts: Facts) -> Welcome:
        """The welcome to ``session``, a new one (its workspace, model, strategy and mode)."""
        workdir = shown_path(session.env.workdir)
        return cls(workdir, session.model, session.loop_name, session.policy.mode, facts, id="welcome")

    @classmethod
    def opening(cls, start: Opening, facts: Facts) -> Welcome:
        """The welcome to the new session ``start`` opens, drawn before it is open (as ``of`` draws it after)."""
        assert start.workdir is not None  # a new session, with a model: not the demo
        assert start.model is not None
        return cls(shown_path(start.workdir), start.model, start.strategy, start.mode, facts, id="welcome")

    def render(self) -> Group:
        title = self.get_component_rich_style("welcome--title", partial=True)
        key = self.get_component_rich_style("welcome--key", partial=True)
        lines = [
            Text.assemble(("Welcome to Chimera", title), " · ", terminal_safe(self.workspace, one_line=True)),
            Text(
                f"model {terminal_safe(self.model, one_line=True) or 'demo'} · strategy {self.loop} · mode {self.mode}"
            ),
            Text(""),
            Text("Say what to do and press enter; each step Chimera takes shows here."),
            _row([("enter", "send"), *key_hints(self.facts)], key),
        ]
        commands = [c for c in (find(name) for name in WELCOME_COMMANDS) if c is not None and c.enabled(self.facts)]
        width = max((len(c.usage) for c in commands), default=0)
        lines += [_row([(c.usage.ljust(width), c.help.partition(" (")[0])], key) for c in commands]
        return Group(*lines)


def _row(pairs: list[tuple[str, str]], key: Style) -> Text:
    """``key what it does`` pairs on one line, two spaces between."""
    text = Text("  ")
    for index, (name, what) in enumerate(pairs):
        if index:
            text.append("   ")
        text.append(name, key)
        text.append(f" {what[:1].lower()}{what[1:]}")
    return text
