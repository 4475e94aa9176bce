"""Provides the words of a bash command as the shell reads them, and ``Command``: flags told from operands.

``word`` unquotes one word node of tree-sitter's bash grammar: quotes and
backslashes removed, ``$'…'`` decoded, a word holding an expansion has no
value (only the run knows it). ``Command.of`` splits short flag clusters
(``-rf`` is ``-r -f``, except for commands whose single-dash options are
words, such as ``find -name``), folds a few long spellings onto their short
flag (``_ALIASES``; ``rm`` also takes any unambiguous start of a long option,
as GNU rm does), skips the value of options that take one (``git -C dir``),
and treats every word after ``--`` as an operand.
"""

from __future__ import annotations

import codecs
import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Arg", "Command", "Word", "flag_spellings", "read_word", "text_of"]

_DYNAMIC = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
_GLOB_CHARS = frozenset("*?[")
_BRACES = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")


def _opts(*names: str) -> frozenset[str]:
    return frozenset(names)


# Long spellings folded onto one flag, per command (GNU coreutils and git).
_ALIASES: dict[str, dict[str, str]] = {
    "rm": {"-R": "-r", "--recursive": "-r", "--force": "-f", "--dir": "-d", "--interactive": "-i", "--verbose": "-v"},
    "cp": {"-R": "-r", "--recursive": "-r", "--force": "-f", "--archive": "-a", "--verbose": "-v"},
    "mv": {"--force": "-f", "--verbose": "-v"},
    "ln": {"--force": "-f", "--symbolic": "-s"},
    "chmod": {"--recursive": "-R"},
    "chown": {"--recursive": "-R"},
    "chgrp": {"--recursive": "-R"},
    "git": {"--force": "-f"},
}
# rm takes any unambiguous start of a long option (``--rec`` is ``--recursive``).
_LONG_OPTIONS = {
    "rm": (
        "--force",
        "--interactive",
        "--one-file-system",
        "--no-preserve-root",
        "--preserve-root",
        "--recursive",
        "--dir",
        "--verbose",
        "--help",
        "--version",
    )
}
_TAKES_VALUE: dict[str, frozenset[str]] = {
    "git": _opts("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"),
}
# Single-dash words that are one long option, not a cluster of letters.
_NO_CLUSTERS = frozenset({"find", "java", "javac", "go", "gcc", "g++", "cc", "clang", "clang++", "ffmpeg", "dd"})


@dataclass(frozen=True, slots=True)
class Word:
    """One shell word: its value without quotes (None when only an expansion at run time tells).

    ``pattern`` is the value with its quoted wildcard characters escaped (``'*'``
    is ``[*]``), for rule patterns; ``glob`` says the shell expands it (an
    unquoted ``*``, ``?``, ``[`` or ``{a,b}``).
    """

    value: str | None
    pattern: str = ""
    glob: bool = False


@dataclass(frozen=True, slots=True)
class Arg:
    """A word after the command word: a flag or an operand, at position ``at``; ``text`` None is unknown."""

    text: str | None
    flag: bool
    at: int


@dataclass(frozen=True, slots=True)
class Command:
    """One command as it is run: ``word`` as written (unquoted), its base ``name``, its ``args``.

    ``open`` says more words may come at run time (``xargs`` reads them from its input; an
    expansion such as ``$x`` may stand for any number of them).
    """

    word: str
    name: str
    args: tuple[Arg, ...]
    open: bool = False

    @property
    def flags(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if a.flag)

    @property
    def operands(self) -> tuple[Arg, ...]:
        return tuple(a for a in self.args if not a.flag)

    @classmethod
    def of(cls, word: str, words: list[Word], *, open: bool = False, pattern: bool = False) -> Command:
        """The command ``word`` with argument ``words`` classified (``pattern``: from their pattern form)."""
        name = posixpath.basename(word.rstrip("/")) or word
        texts = [w.pattern if pattern else w.value for w in words]
        dynamic = any(w.value is None for w in words)
        return cls(word, name, _classify(name, texts, [w.glob for w in words]), open or dynamic)


def text_of(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


def _bare(text: str, value: list[str], pattern: list[str]) -> bool:
    """Unquote an unquoted piece into ``value`` and ``pattern``; True when it holds a wildcard."""
    glob = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\" and i + 1 < len(text):
            nxt = text[i + 1]
            if nxt != "\n":
                value.append(nxt)
                pattern.append(f"[{nxt}]" if nxt in _GLOB_CHARS else nxt)
            i += 2
            continue
        glob = glob or char in _GLOB_CHARS
        value.append(char)
        pattern.append(char)
        i += 1
    return glob


def _quoted(text: str, value: list[str], pattern: list[str]) -> None:
    for char in text:
        value.append(char)
        pattern.append(f"[{char}]" if char in _GLOB_CHARS else char)


def _double_quoted(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _ansi_c(text: str) -> str:
    text = re.sub(r"\\[eE]", r"\\x1b", text)
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeError, ValueError):
        return text


def read_word(node: Node) -> Word:
    """The word ``node`` spells (a word, string, concatenation, …)."""
    value: list[str] = []
    pattern: list[str] = []
    state = {"dynamic": False, "glob": False}

    def add(n: Node) -> None:
        kind = n.type
        if kind in _DYNAMIC:
            state["dynamic"] = True
        elif kind == "concatenation":
            for child in n.children:
                add(child)
        elif kind == "raw_string":
            _quoted(text_of(n)[1:-1], value, pattern)
        elif kind == "ansi_c_string":
            _quoted(_ansi_c(text_of(n)[2:-1]), value, pattern)
        elif kind == "translated_string":  # $"…"
            for child in n.named_children:
                add(child)
        elif kind == "string":
            if any(c.type != "string_content" for c in n.named_children):
                state["dynamic"] = True
            else:
                text = text_of(n)
                _quoted(_double_quoted(text[text.index('"') + 1 : -1]), value, pattern)
        elif kind == "brace_expression":
            state["glob"] = True
            _bare(text_of(n), value, pattern)
        elif not n.is_named and kind == "$":
            pass  # the `$` of `$"…"`, which the grammar keeps apart
        elif n.named_child_count == 0:
            state["glob"] = _bare(text_of(n), value, pattern) or state["glob"]
        else:
            state["dynamic"] = True

    add(node)
    glob = state["glob"] or bool(_BRACES.search(text_of(node)))
    if state["dynamic"]:
        return Word(None, "", glob)
    return Word("".join(value), "".join(pattern), glob)


@lru_cache(maxsize=1024)
def flag_spellings(name: str, flag: str) -> tuple[str, ...]:
    """The spellings of ``name``'s folded ``flag``: itself and the long forms folded onto it."""
    key, eq, rest = flag.partition("=")
    return (flag, *(long + eq + rest for long, short in _ALIASES.get(name, {}).items() if short == key))


def _alias(name: str, flag: str) -> str:
    key, eq, rest = flag.partition("=")
    if key.startswith("--") and name in _LONG_OPTIONS and key not in _LONG_OPTIONS[name]:
        starts = [o for o in _LONG_OPTIONS[name] if o.startswith(key)]
        key = starts[0] if len(starts) == 1 else key
    key = _ALIASES.get(name, {}).get(key, key)
    return key + eq + rest


def _classify(name: str, texts: list[str | None], globs: list[bool]) -> tuple[Arg, ...]:
    """Flags and operands of a command's words; clusters split, aliases folded, values of options skipped."""
    args: list[Arg] = []
    operands_only = False
    skip = False
    takes_value = _TAKES_VALUE.get(name, frozenset())
    for at, (text, glob) in enumerate(zip(texts, globs, strict=True)):
        if skip:
            skip = False
            continue
        if text is None or operands_only or not text.startswith("-") or text == "-":
            args.append(Arg(text, False, at))
        elif text == "--":
            operands_only = True
        elif text.startswith("--") or name in _NO_CLUSTERS or glob:
            args.append(Arg(_alias(name, text), True, at))
            skip = text in takes_value
        else:
            for letter in text[1:]:
                args.append(Arg(_alias(name, "-" + letter), True, at))
            skip = text in takes_value
    operands = [a.text for a in args if not a.flag]
    if name == "git" and operands[:1] == ["push"] and any((t or "").startswith("+") for t in operands):
        args.append(Arg("-f", True, len(texts)))  # `git push origin +main` forces like --force
    return tuple(args)
