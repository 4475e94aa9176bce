"""Provides ``misplaced``: one line for a command line the workbench cannot take, saying what to type instead.

``chimera`` alone opens the workbench, which takes few options; the others belong to a command
(``--max-turns`` to ``chimera run``, ``--yes`` to ``chimera switch``). Given to the workbench, argparse would
answer with words about the command it expected (``invalid choice: '5'``); this says which command takes
the option, with the command line to type (``chimera run --max-turns 5 TASK``), or what the workbench
takes. A task given where a command goes (``chimera "fix the test"``) is pointed at ``chimera run``.
"""

from __future__ import annotations

import argparse
import difflib
import shlex
from collections.abc import Mapping, Sequence

__all__ = ["misplaced"]


def misplaced(parser: argparse.ArgumentParser, given: Sequence[str]) -> str | None:
    """Why ``given`` (the words after ``chimera``) does not fit the workbench's ``parser``, when what is wrong
    comes before any command: an option of another command, an option nobody takes, or a word that is no
    command. None when the words up to the command are the workbench's (argparse says what else is wrong)."""
    commands = _commands(parser)
    at = 0
    while at < len(given):
        word = given[at]
        if word == "--" or word in commands:
            return None  # what follows is the command's (or not options at all)
        if not word.startswith("-") or word == "-":
            return _not_a_command(word, commands)
        name, equals, _ = word.partition("=")
        action = _option(parser, name)
        if action is None:
            return _elsewhere(parser, commands, name, given[at + 1 :] if not equals else [], word)
        at += 1 + _values(action, bool(equals), given[at + 1 :], commands)
    return None


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def _option(parser: argparse.ArgumentParser, name: str) -> argparse.Action | None:
    """The action ``parser`` takes ``name`` for: its own spelling, or (``--long`` only) the beginning of one."""
    options = parser._option_string_actions
    if name in options:
        return options[name]
    if not name.startswith("--") or len(name) < 3:
        return None
    begun = {action for spelling, action in options.items() if spelling.startswith(name)}
    return begun.pop() if len(begun) == 1 else None


def _values(action: argparse.Action, joined: bool, rest: Sequence[str], commands: Mapping[str, object]) -> int:
    """How many of the words after an option are its value (none when given as ``--opt=value``)."""
    if joined or action.nargs == 0:
        return 0
    if action.nargs == "?":
        return int(bool(rest) and not rest[0].startswith("-") and rest[0] not in commands)
    return 1 if rest else 0


def _elsewhere(
    parser: argparse.ArgumentParser,
    commands: dict[str, argparse.ArgumentParser],
    name: str,
    rest: Sequence[str],
    typed: str,
) -> str:
    """The line for ``name``, an option the workbench does not take: the commands that do, else the options it
    may be the beginning or a misspelling of, else what the workbench takes."""
    takers = [(command, sub, action) for command, sub in commands.items() if (action := _option(sub, name))]
    if takers:
        whose = _listed([f"`chimera {command}`" for command, _, _ in takers])
        command, sub, action = takers[0]
        example = _example(command, sub, action, typed, rest)
        return f"{name} is an option of {whose}, not of the workbench: {'such as ' if len(takers) > 1 else ''}{example}"
    owners: dict[str, str] = {}  # each option of a command, by spelling: the first command that takes it
    for command, sub in commands.items():
        for spelling in sub._option_string_actions:
            owners.setdefault(spelling, command)
    begun = [s for s in owners if name.startswith("--") and s.startswith(name)]
    if begun:
        takes = [
            f"`chimera {c}` takes {_listed([s for s in begun if owners[s] == c])}"
            for c in dict.fromkeys(owners[s] for s in begun)
        ]
        return f"{name} is not an option of the workbench: {'; '.join(takes)}"
    own = _own(parser)
    near = difflib.get_close_matches(name, [*own, *(s for s in owners if s.startswith("--"))], n=1, cutoff=0.75)
    if near and near[0] in own:
        return f"{name} is not an option of chimera: did you mean {near[0]}? (see chimera --help)"
    if near:
        sub = commands[owners[near[0]]]
        example = _example(owners[near[0]], sub, sub._option_string_actions[near[0]], near[0], rest)
        return f"{name} is not an option of chimera: did you mean {example}?"
    return f"{name} is not an option of chimera: the workbench takes {_listed(own)} (see chimera --help)"


def _example(
    command: str, parser: argparse.ArgumentParser, action: argparse.Action, typed: str, rest: Sequence[str]
) -> str:
    """``chimera COMMAND OPTION VALUE WORDS``: the command line that gives ``command`` the option as it was typed."""
    if "=" in typed:
        given = [shlex.quote(typed)]
    elif action.nargs == 0:
        given = [_longest(action)]
    else:
        given = [_longest(action), shlex.quote(rest[0]) if rest else _metavar(action)]
    return "`" + " ".join(["chimera", command, *given, *_needs(parser, action)]) + "`"


def _not_a_command(word: str, commands: dict[str, argparse.ArgumentParser]) -> str:
    """The line for ``word`` where a command goes: the nearest command, else how to run it as a task."""
    near = difflib.get_close_matches(word, list(commands), n=1, cutoff=0.75)
    if near:
        return f"{shlex.quote(word)} is not a command: did you mean `chimera {near[0]}`? (see chimera --help)"
    return (
        f"{shlex.quote(word)} is not a command ({', '.join(commands)}): to run it as a task without the workbench, "
        f"`chimera run {shlex.quote(word)}`; or open the workbench (`chimera`) and type it there"
    )


def _own(parser: argparse.ArgumentParser) -> list[str]:
    """The workbench's options, each by its longest spelling, help and version left out."""
    return [
        _longest(a)
        for a in parser._actions
        if a.option_strings and a.dest not in ("help", "version") and not isinstance(a, argparse._SubParsersAction)
    ]


def _needs(parser: argparse.ArgumentParser, given: argparse.Action) -> list[str]:
    """What a command cannot do without, beside the option ``given``: its words (``TASK``, ``ID``) and its
    required options."""
    words = []
    for action in parser._actions:
        if not action.option_strings and not isinstance(action, argparse._SubParsersAction):
            words.append(_metavar(action))
        elif action.required and action is not given:
            words += [_longest(action), _metavar(action)]
    return words


def _longest(action: argparse.Action) -> str:
    return max(action.option_strings, key=len)


def _metavar(action: argparse.Action) -> str:
    metavar = action.metavar
    return metavar if isinstance(metavar, str) else action.dest.upper()


def _listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
