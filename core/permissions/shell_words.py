"""Provides the words of a bash command as the shell reads them, and ``Command``: flags told from operands.

``read_word`` unquotes one word node of tree-sitter's bash grammar: quotes
and backslashes removed, ``$'…'`` decoded exactly as bash does (``ansi_c``),
a word holding an expansion has no value (only the run knows it).
``read_words`` also brace-expands it as bash does (``shell_braces.py``).
``Command.of`` splits short flag clusters (``-rf`` is ``-r -f``, except for
commands whose single-dash options are words, such as ``find -name``), folds
a few long spellings onto their short flag (``_ALIASES``; ``rm`` also takes
any unambiguous start of a long option, as GNU rm does), skips the value of
options that take one (``git -C dir``), and treats every word after ``--`` as
an operand. A command is ``open`` (its words may be others at run time) when
a word is an expansion, or a wildcard that may match a file named like a
flag.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from chimera.core.permissions.shell_braces import Unit, expand_braces

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["Arg", "Command", "Word", "ansi_c", "flag_spellings", "literal_text", "read_word", "read_words", "text_of"]

_DYNAMIC = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
_GLOB_CHARS = frozenset("*?[")
_SIMPLE = re.compile(r"[^\\{*?\[]*")


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
    "git": _opts("-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env")
    | _opts("--super-prefix", "--attr-source", "--shallow-file"),
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
    glob: str = ""  # the word's pattern when the shell expands its wildcards (an operand may be many files)


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
        globs = [w.pattern if w.glob else "" for w in words]
        return cls(word, name, _classify(name, texts, globs), open or (not pattern and _unknown_args(words)))


def _unknown_args(words: list[Word]) -> bool:
    """Whether ``words`` may stand for other words at run time: an expansion, or a wildcard that may match a file
    named like a flag (``*`` in a folder holding ``-rf``)."""
    options = True
    for word in words:
        if word.value is None:
            return True
        if word.value == "--":
            options = False
        elif options and word.glob and word.value[:1] in _GLOB_CHARS:
            return True
    return False


def text_of(node: Node) -> str:
    return (node.text or b"").decode("utf-8", "surrogateescape")


_SIMPLE_ESCAPES = {
    "a": 7, "b": 8, "e": 27, "E": 27, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11,
    "\\": 92, "'": 39, '"': 34, "?": 63,
}  # fmt: skip
_HEX = "0123456789abcdefABCDEF"


def ansi_c(body: str) -> str | None:
    """What bash makes of ``$'body'`` (bash's ``ansicstr``): escapes decoded, cut at the first NUL.

    ``\\xHH`` takes one or two hex digits, ``\\uHHHH`` one to four, ``\\UHHHHHHHH`` one to eight,
    ``\\NNN`` one to three octal digits; an unknown escape keeps its backslash. None when the
    result is not certain (a code point that is not a character, ``\\c`` before a backslash).
    """
    data = body.encode("utf-8", "surrogateescape")
    out = bytearray()
    at = 0
    while at < len(data):
        byte = data[at]
        if byte != 0x5C or at + 1 >= len(data):
            out.append(byte)
            at += 1
            continue
        escape = chr(data[at + 1])
        at += 2
        value: int | None = None
        if escape in _SIMPLE_ESCAPES:
            value = _SIMPLE_ESCAPES[escape]
        elif escape in "01234567":
            digits = escape
            while len(digits) < 3 and at < len(data) and chr(data[at]) in "01234567":
                digits += chr(data[at])
                at += 1
            value = int(digits, 8) & 0xFF
        elif escape in "xuU":
            most = {"x": 2, "u": 4, "U": 8}[escape]
            digits = ""
            while len(digits) < most and at < len(data) and chr(data[at]) in _HEX:
                digits += chr(data[at])
                at += 1
            if not digits:
                out += b"\\" + escape.encode()
                continue
            value = int(digits, 16)
            if escape != "x" and value >= 0x80:
                if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:
                    return None
                out += chr(value).encode("utf-8")
                continue
        elif escape == "c":
            if at >= len(data):
                out += b"\\c"
                continue
            if data[at] == 0x5C or data[at] >= 0x80:
                return None
            char = chr(data[at])
            at += 1
            value = 0x7F if char == "?" else ord(char.upper()) & 0x1F
        else:
            out += b"\\" + escape.encode("latin-1")
            continue
        if value == 0:
            break  # bash's string ends at a NUL
        out.append(value)
    return out.decode("utf-8", "surrogateescape")


def _bare_units(text: str, units: list[Unit]) -> None:
    """The characters of an unquoted piece, a backslash quoting the character after it."""
    at = 0
    while at < len(text):
        char = text[at]
        if char == "\\" and at + 1 < len(text):
            if text[at + 1] != "\n":
                units.append(Unit(text[at + 1], "\\"))
            at += 2
            continue
        units.append(Unit(char))
        at += 1


def _quoted_units(text: str, units: list[Unit]) -> None:
    units.extend(Unit(char, "'") for char in text)
    if not text:
        units.append(Unit("", "'"))  # '' is an empty word, not no word


def _double_quoted(text: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _units(node: Node, units: list[Unit]) -> None:
    """Append the characters ``node`` spells, an expansion as one unit of unknown text."""
    kind = node.type
    if kind in _DYNAMIC:
        units.append(Unit(None, "'"))
    elif kind == "concatenation":
        for child in node.children:
            _units(child, units)
    elif kind == "raw_string":
        _quoted_units(text_of(node)[1:-1], units)
    elif kind == "ansi_c_string":
        decoded = ansi_c(text_of(node)[2:-1])
        if decoded is None:
            units.append(Unit(None, "'"))
        else:
            _quoted_units(decoded, units)
    elif kind == "translated_string":  # $"…"
        for child in node.named_children:
            _units(child, units)
    elif kind == "string":
        if any(c.type != "string_content" for c in node.named_children):
            units.append(Unit(None, "'"))
        else:
            text = text_of(node)
            _quoted_units(_double_quoted(text[text.index('"') + 1 : -1]), units)
    elif not node.is_named and kind == "$":
        pass  # the `$` of `$"…"`, which the grammar keeps apart
    elif node.named_child_count == 0 or kind == "brace_expression":
        _bare_units(text_of(node), units)
    else:
        units.append(Unit(None, "'"))


def _word(units: list[Unit], *, braces: bool = False) -> Word:
    glob = braces or any(not u.quoted and u.text in _GLOB_CHARS for u in units)
    if any(u.text is None for u in units):
        return Word(None, "", glob)
    value = "".join(u.text or "" for u in units)
    pattern = "".join(f"[{u.text}]" if u.quoted and u.text in _GLOB_CHARS else u.text or "" for u in units)
    return Word(value, pattern, glob)


def _simple(node: Node) -> Word | None:
    """The word of a bare word node with no backslash, wildcard or brace (most words), read at once."""
    if node.type != "word" or node.named_child_count:
        return None
    text = text_of(node)
    return Word(text, text) if _SIMPLE.fullmatch(text) else None


def read_word(node: Node) -> Word:
    """The word ``node`` spells (a word, string, concatenation, …), with no brace expansion (``glob`` says one
    would happen)."""
    simple = _simple(node)
    if simple is not None:
        return simple
    units: list[Unit] = []
    _units(node, units)
    expanded = expand_braces(units)
    same = expanded is not None and len(expanded) == 1 and [u.text for u in expanded[0]] == [u.text for u in units]
    return _word(units, braces=not same)


def read_words(node: Node) -> list[Word]:
    """The words ``node`` stands for after bash's brace expansion (``-{r,f}`` is ``-r -f``); one unknown word
    when the expansion is not certain."""
    simple = _simple(node)
    if simple is not None:
        return [simple]
    units: list[Unit] = []
    _units(node, units)
    expanded = expand_braces(units)
    if expanded is None:
        return [Word(None, "", True)]
    return [_word(u) for u in expanded if u]


def literal_text(node: Node) -> str:
    """The text ``node`` spells with quotes removed and escapes decoded, an expansion as a NUL."""
    units: list[Unit] = []
    _units(node, units)
    return "".join("\0" if u.text is None else u.text for u in units)


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


def _classify(name: str, texts: list[str | None], globs: list[str]) -> tuple[Arg, ...]:
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
            args.append(Arg(text, False, at, glob))
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
