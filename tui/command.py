"""Provides the workbench command's shape: ``Command`` (one command, as data), ``Facts`` (what decides whether it
works now) and ``Completion`` (one completion of a typed command line). The commands themselves are in
``tui.command_table``; what is built from them in ``tui.commands``. No Textual here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from chimera.tui.state import WorkbenchState

__all__ = ["Command", "Completion", "Facts"]


@dataclass(frozen=True, slots=True)
class Facts:
    """What decides whether a command works now: the workbench's state and the app's own facts."""

    state: WorkbenchState
    running: bool = False  # a run (or a compaction) is working
    demo: bool = False  # the offline demo plays a recording
    recorded: bool = False  # the session holds something to replay or export
    themes: tuple[str, ...] = ()  # the themes the app knows
    models: tuple[str, ...] = ()  # model names to offer (the one in use first)
    kept: tuple[int, ...] = ()  # the numbers of the answers kept by "always" this session (as /mode lists them)
    points: tuple[str, ...] = ()  # the session's checkpoint names and node ids to offer, names first
    mcp: tuple[tuple[str, bool], ...] = ()  # the MCP servers: each one's name and whether it is enabled


def _always(_: Facts) -> str:
    return ""


@dataclass(frozen=True, slots=True)
class Command:
    """One command. ``argument`` is how its argument reads in help (``TASK``; in brackets when optional:
    ``[FILE]``); ``keys`` are Textual key names, comma-separated; ``unavailable`` says why it does not work
    now, and what to do instead ("" when it works)."""

    id: str
    title: str
    help: str
    argument: str = ""
    keys: str = ""
    key_display: str = ""
    priority: bool = False  # its keys work over everything, even a question's screen
    scope: str = "app"  # where its keys are bound: the app, or a panel ("plan", "question") when it has the focus
    completions: Callable[[Facts], Sequence[str]] | None = None
    unavailable: Callable[[Facts], str] = field(default=_always)
    # When the completions are examples, not the only choices: what else the argument may be ("any model your
    # server serves"); empty when the completions are all there is (a strategy, a theme).
    open_choice: str = ""

    @property
    def slash(self) -> str:
        return f"/{self.id}"

    @property
    def usage(self) -> str:
        """How it is typed: ``/loop NAME``."""
        return f"{self.slash} {self.argument}" if self.argument else self.slash

    @property
    def needs_argument(self) -> bool:
        return bool(self.argument) and not self.argument.startswith("[")

    def enabled(self, facts: Facts) -> bool:
        return not self.unavailable(facts)

    def choices(self, facts: Facts) -> list[str]:
        """The argument's completions now (none for a free one, such as a task)."""
        return list(self.completions(facts)) if self.completions is not None else []


@dataclass(frozen=True, slots=True)
class Completion:
    """One completion of what is typed: ``text`` replaces the input's text; ``label`` and ``help`` show."""

    text: str
    label: str
    help: str = ""
