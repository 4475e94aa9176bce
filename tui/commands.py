"""Provides the workbench's commands, each defined once (``COMMANDS``), and what is built from them.

A :class:`Command` is data (``tui.command``): its id (which is also its slash name), its argument and a
function that lists the argument's completions, its keys, title and one-line help, and when it is available
(a function of :class:`Facts`, the workbench's state and the app's own facts, that says why not); the part of
the workbench that runs it answers to its id. Every command is in one table (``tui.command_table``). From it
come the input's slash commands (:func:`parse`), their completion (:func:`complete`), the footer's hints
(:func:`key_hints`), the help screen (:func:`available`), and in ``tui.command_views`` the app's key bindings
and the command palette. Nothing typed that starts with ``/`` goes to the model: it is a command, or one line
saying it is not one (:func:`unknown`). A line that starts with ``//`` is words that begin with a slash
(:func:`literal`). No Textual here.
"""

from __future__ import annotations

import difflib

from chimera.tui.command import Command, Completion, Facts
from chimera.tui.command_table import COMMANDS

__all__ = [
    "COMMANDS",
    "Command",
    "Completion",
    "Facts",
    "available",
    "complete",
    "find",
    "is_command",
    "key_hints",
    "literal",
    "parse",
    "unknown",
]


_BY_ID = {command.id: command for command in COMMANDS}


def find(name: str) -> Command | None:
    """The command ``name`` (with or without its slash), or None."""
    return _BY_ID.get(name.removeprefix("/"))


def is_command(text: str) -> bool:
    """Whether typed ``text`` is a command (it starts with one slash), not words for the model."""
    text = text.lstrip()
    return text.startswith("/") and not text.startswith("//")


def literal(text: str) -> str:
    """Words typed to begin with a slash: ``//etc/hosts`` is ``/etc/hosts`` (anything else as it is)."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text


def parse(text: str) -> tuple[str, str]:
    """A typed command line as its name (without the slash) and its argument (stripped)."""
    name, _, argument = text.strip().removeprefix("/").partition(" ")
    return name, argument.strip()


def unknown(name: str) -> str:
    """One line for a name that is no command, naming the nearest one when there is one."""
    near = difflib.get_close_matches(name, list(_BY_ID), n=1, cutoff=0.6)
    hint = f"did you mean /{near[0]}? " if near else ""
    return f"/{name} is not a command: {hint}/help lists them (start with // to send words that begin with /)."


def available(facts: Facts) -> list[Command]:
    """The commands that work now, in the registry's order."""
    return [command for command in COMMANDS if command.enabled(facts)]


def key_hints(facts: Facts) -> list[tuple[str, str]]:
    """What a footer shows: (keys, title) of each command that works now and has keys."""
    return [(c.key_display or c.keys, c.title) for c in available(facts) if c.keys]


def complete(text: str, facts: Facts) -> list[Completion]:
    """The completions of a typed command line, best first: the exact name (or argument) typed, then those
    that begin with it, then those that hold it. Only commands that work now; nothing for words."""
    if not is_command(text):
        return []
    typed = text.lstrip()
    name, space, argument = typed.removeprefix("/").partition(" ")
    if not space:
        commands = {c.id: c for c in available(facts)}
        ranked = [commands[found] for found in _ranked(name, list(commands))]
        return [Completion(c.slash + (" " if c.argument else ""), c.usage, c.help) for c in ranked]
    command = find(name)
    if command is None or not command.enabled(facts):
        return []
    more = " " if " " in (command.argument or "") else ""  # words follow the one completed (/label NODE TEXT)
    return [
        Completion(f"{command.slash} {choice}{more}", choice)
        for choice in _ranked(argument.strip(), command.choices(facts))
    ]


def _ranked(typed: str, names: list[str]) -> list[str]:
    """``names`` that match ``typed``: the exact one, then those beginning with it, then those holding it
    (case ignored), each group in its own order."""
    low = typed.lower()
    exact = [n for n in names if n.lower() == low]
    starts = [n for n in names if n.lower().startswith(low) and n not in exact]
    holds = [n for n in names if low in n.lower() and n not in exact and n not in starts]
    return exact + starts + holds
