"""Provides how a rule's pattern meets a call: a command pattern meets parsed commands, a path pattern paths.

A command pattern (``bash(git status *)``) is one command as the shell reads
it: its command word (a base name, or a path when it holds a ``/``), its
flags as a set (order and clustering never matter: ``-rf`` is ``-r -f``) and
its operands in order, with shell wildcards. A trailing ``*`` (alone, or
ending the last word as in ``status*``) matches any remaining words. Quoted
wildcards are literal.

- ``allows``: the call's command has exactly the pattern's flags and operands,
  except that a trailing ``*`` admits more after the named ones. Words only an
  expansion yields never match a named word.
- ``denies``: the command has at least the pattern's flags, and its first
  operands match the pattern's (more may follow). Words only known at run time
  (``$x``, what ``xargs`` reads) may be anything, so they count as matching.

A path pattern is matched against a normalized workspace-relative path: ``*``
matches any characters (``/`` included), ``**/`` any number of folders (none
included), ``?`` one character, ``[…]`` a class.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from fnmatch import fnmatchcase
from functools import lru_cache

from chimera.core.permissions.shell import parse_words
from chimera.core.permissions.shell_words import Command, Word, flag_spellings

__all__ = ["CommandPattern", "command_pattern", "path_matches", "pattern_problem", "rule_word"]

_SYSTEM_BIN = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin"}
)


@dataclass(frozen=True, slots=True)
class CommandPattern:
    """A parsed command pattern: the command it names, and whether a trailing ``*`` admits more words."""

    command: Command
    rest: bool

    def allows(self, call: Command) -> bool:
        """Whether ``call`` is exactly what this pattern names (see the module docstring)."""
        if not self._name_matches(call, allow=True) or (call.open and not self.rest):
            return False
        operands, named = call.operands, self.command.operands
        if len(operands) < len(named) or (len(operands) > len(named) and not self.rest):
            return False
        for arg, want in zip(operands, named, strict=False):
            if arg.text is None or want.text is None or not fnmatchcase(arg.text, want.text):
                return False
        last = operands[len(named) - 1].at if named else -1
        wanted = [f.text for f in self.command.flags if f.text is not None]
        if not all(any(_flag_matches(call.name, f.text, w) for f in call.flags) for w in wanted):
            return False
        return all(
            any(_flag_matches(call.name, f.text, w) for w in wanted) or (self.rest and f.at > last) for f in call.flags
        )

    def denies(self, call: Command) -> bool:
        """Whether ``call`` is, or may be at run time, the command this pattern names, with at least its words."""
        if not self._name_matches(call, allow=False):
            return False
        for want in self.command.flags:
            w = want.text or ""
            if not call.open and not any(_flag_matches(call.name, f.text, w, loose=True) for f in call.flags):
                return False
        operands = call.operands
        for at, want in enumerate(self.command.operands):
            if at >= len(operands):
                return call.open
            arg = operands[at]
            if arg.glob:  # it may stand for any number of files, so what follows may shift
                return _glob_meets(arg.glob, arg.text or "", want.text or "")
            if arg.text is not None and not _operand_matches(arg.text, want.text or ""):
                return False
        return True

    def _name_matches(self, call: Command, *, allow: bool) -> bool:
        named_path = "/" in self.command.word
        if allow and named_path:
            return fnmatchcase(posixpath.normpath(call.word), posixpath.normpath(self.command.word))
        if allow and rule_word(call) != call.name:
            return False  # ./ls is not the ls a rule names
        return fnmatchcase(call.name, self.command.name)


def rule_word(command: Command) -> str:
    """How a rule names ``command``: its base name, or its path when that is not a system folder's."""
    if "/" in command.word and posixpath.dirname(posixpath.normpath(command.word)) not in _SYSTEM_BIN:
        return command.word
    return command.name


def _flag_matches(name: str, flag: str | None, want: str, *, loose: bool = False) -> bool:
    """Whether a call's ``flag`` (any spelling of it; ``loose``: also without its ``=value``) matches ``want``."""
    if flag is None:
        return False
    spellings = flag_spellings(name, flag)
    if loose:
        spellings = (*spellings, *(s.partition("=")[0] for s in spellings))
    return any(fnmatchcase(s, want) for s in spellings)


def _lexical(text: str) -> str:
    return re.sub(r"^/+", "/", posixpath.normpath(text)) if "/" in text or text.startswith(".") else text


def _operand_matches(text: str, want: str) -> bool:
    return fnmatchcase(text, want) or fnmatchcase(_lexical(text), _lexical(want))


def _glob_meets(glob: str, text: str, want: str) -> bool:
    """Whether a call's wildcard word ``glob`` (``text`` when nothing matches it) may expand to a name the
    pattern word ``want`` matches: a literal ``want`` it matches, or any ``want`` holding wildcards itself."""
    if any(c in want for c in "*?["):
        return True
    return _operand_matches(text, want) or fnmatchcase(want, glob) or fnmatchcase(_lexical(want), _lexical(glob))


_CLUSTER_REST = re.compile(r"(-[A-Za-z0-9]+)\*")


@lru_cache(maxsize=256)
def command_pattern(text: str) -> CommandPattern | None:
    """``text`` as a command pattern; None when it is not one plain command of literal words and wildcards.

    A last word that is a flag cluster ending in ``*`` (``rm -rf*``) is those flags, then anything.
    """
    words = parse_words(text)
    if words is None:
        return None
    head, args = words[0], list(words[1:])
    last = args[-1].pattern if args else head.pattern
    rest = last.endswith("*")
    if args and last == "*":
        args.pop()
    elif args and (cluster := _CLUSTER_REST.fullmatch(last)):
        args[-1] = Word(cluster.group(1), cluster.group(1))
    return CommandPattern(Command.of(head.pattern, args, pattern=True), rest)


def pattern_problem(text: str) -> str:
    """Why the command pattern ``text`` could never match as meant ("" when it can): a wildcard inside a cluster
    of one-letter flags (``-r*f``), which is matched against each flag alone."""
    words = parse_words(text)
    for at, word in enumerate(words[1:] if words else ()):
        flag = word.pattern
        if not word.glob or not flag.startswith("-") or flag.startswith("--") or not re.search(r"[A-Za-z0-9]", flag):
            continue
        if at == len(words or ()) - 2 and _CLUSTER_REST.fullmatch(flag):
            continue
        return f"the flag word {flag} mixes flags and wildcards; write the flags apart, such as bash(rm -rf *)"
    return ""


@lru_cache(maxsize=256)
def _path_regex(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        char = pattern[i]
        if char == "*":
            out.append(".*")
        elif char == "?":
            out.append(".")
        elif char == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = re.sub(r"([\\\[&~|]|-(?=-))", r"\\\1", pattern[i + 1 : end])  # literal, as fnmatch reads them
            out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out), re.DOTALL)


def path_matches(path: str, pattern: str, *, inside: bool = False) -> bool:
    """Whether the normalized ``path`` matches ``pattern``.

    With ``inside``, also when a folder above it does, or when the pattern covers all a folder
    holds (``secrets/**`` covers ``secrets``).
    """
    regex = _path_regex(pattern)
    if regex.fullmatch(path):
        return True
    if inside:
        parts = path.split("/")
        return bool(regex.fullmatch(path + "/")) or any(
            regex.fullmatch("/".join(parts[:n])) for n in range(1, len(parts))
        )
    return False
