"""Provides ``parse_line``: the simple commands a bash command line runs, as the shell will run them.

The line is parsed with tree-sitter's bash grammar and walked through every
compound form (lists, pipelines, subshells, groups, if/while/for/case,
functions, negation, command and process substitutions, heredoc bodies).
Each simple command becomes an ``Invocation``: its layers, outermost first,
so ``sudo env A=1 rm -rf x`` is ``sudo …``, ``env …`` and ``rm -rf x``. In
each ``Command`` the command word is unquoted and reduced to its base name
(``/bin/'r'm`` is ``rm``), leading assignments are dropped, and its words
are unquoted and told apart as flags and operands (``shell_words.py``).

What cannot be decided from the text is reported: ``unknown`` (no allow rule
may cover the line: a command word that only an expansion yields, ``eval``,
``source``, ``sh -c``, text that does not parse) and ``opaque`` (a deny rule
cannot see what runs either: the string given to ``eval`` or ``sh -c`` is not
a literal, a shell reads its commands from its input). Literal strings given
to ``eval``, ``trap``, ``watch``, ``env -S``, ``su -c`` or ``sh -c`` are
parsed in turn, so their commands are listed too, as are the commands
``find -exec`` runs.

The wrappers unwrapped are ``_WRAPPERS``: ``command``, ``builtin``, ``exec``,
``time``, ``nice``, ``nohup``, ``setsid``, ``env``, ``timeout``, ``stdbuf``,
``ionice``, ``xargs`` (the command then takes more words from its input),
``busybox``, ``toybox``, and ``sudo``, ``doas``, ``coproc`` (which change how
it runs, so an allow rule must name them). Assignments that choose what runs
(``PATH=…``, ``LD_PRELOAD=…``, ``GIT_…``, ``…PAGER``, ``…EDITOR``) make the
line unknown. tree-sitter is imported on first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from chimera.core.shell_words import Command, Word, read_word, text_of

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["Invocation", "Line", "parse_line", "parse_words"]

_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPERATORS = frozenset({">", ">>", "&>", "&>>", ">|", ">&"})
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "su"})
_SHELL_OPTION_ARGS = frozenset({"-o", "+o", "-O", "+O", "--rcfile", "--init-file"})
_STRING_RUNNERS = frozenset({"eval", "trap"})
_FILE_RUNNERS = frozenset({"source", "."})
_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_MAX_DEPTH = 8


@dataclass(frozen=True, slots=True)
class _Wrapper:
    """A command that runs the command after its own options: which of those take a value, and how many operands."""

    takes_value: frozenset[str] = frozenset()
    operands: int = 0  # words before the command (timeout's duration)
    assignments: bool = False  # NAME=VALUE words before the command (env, sudo)
    transparent: bool = True  # runs the command as it is (sudo and doas change who runs it)
    none_if: frozenset[str] = frozenset()  # options with which it runs no command (command -v)
    string: frozenset[str] = frozenset()  # options whose value is a command line (env -S)


def _opts(*names: str) -> frozenset[str]:
    return frozenset(names)


_WRAPPERS: dict[str, _Wrapper] = {
    "command": _Wrapper(none_if=_opts("-v", "-V")),
    "builtin": _Wrapper(),
    "exec": _Wrapper(_opts("-a")),
    "time": _Wrapper(_opts("-f", "-o", "--format", "--output")),
    "nice": _Wrapper(_opts("-n", "--adjustment")),
    "nohup": _Wrapper(),
    "setsid": _Wrapper(),
    "env": _Wrapper(
        _opts("-u", "-C", "-S", "--unset", "--chdir", "--split-string"),
        assignments=True,
        string=_opts("-S", "--split-string"),
    ),
    "timeout": _Wrapper(_opts("-s", "-k", "--signal", "--kill-after"), operands=1),
    "stdbuf": _Wrapper(_opts("-i", "-o", "-e", "--input", "--output", "--error")),
    "ionice": _Wrapper(_opts("-c", "-n", "-t", "--class", "--classdata")),
    "xargs": _Wrapper(
        _opts("-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args")
        | _opts("--max-lines", "--max-procs", "--max-chars", "--process-slot-var", "--eof", "--replace")
    ),
    "sudo": _Wrapper(
        _opts("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R", "--user", "--group", "--chdir"),
        assignments=True,
        transparent=False,
    ),
    "doas": _Wrapper(_opts("-u", "-C"), transparent=False),
    "coproc": _Wrapper(transparent=False),
    "busybox": _Wrapper(),
    "toybox": _Wrapper(),
}

# Assignments that choose which program runs, or what it runs on the side.
_RISKY_NAME = re.compile(
    r"PATH|BASH_ENV|ENV|IFS|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|LD_\w+|DYLD_\w+|GIT_\w+"
    r"|\w*PAGER|\w*EDITOR|VISUAL|\w*_COMMAND|\w*ASKPASS"
)
_HARMLESS_VALUES = frozenset({"", "cat", "0", "1", "true", "false"})


@dataclass(frozen=True, slots=True)
class Invocation:
    """One simple command: its layers, outermost first (``sudo rm x``: ``sudo rm x``, then ``rm x``)."""

    layers: tuple[Command, ...]
    transparent: int = 1  # how many layers, from the outside, run as the line's own command

    @property
    def runs(self) -> tuple[Command, ...]:
        """The layers an allow rule may name: the outermost and those only plain wrappers lead to."""
        return self.layers[: self.transparent]


@dataclass(frozen=True, slots=True)
class Line:
    """What a command line runs, and what about it cannot be decided from its text."""

    invocations: tuple[Invocation, ...] = ()
    chained: bool = False  # more than one command, or a compound form, a pipe, a background job
    redirected: bool = False
    substituted: bool = False
    unknown: str = ""  # why no allow rule can cover it
    opaque: str = ""  # why a deny rule cannot see all it runs
    reads: tuple[str, ...] = ()  # words that may name files it reads, and input redirections
    writes: tuple[str, ...] = ()  # output redirection targets

    @property
    def single(self) -> Invocation | None:
        """The one invocation of a plain line: one command, nothing redirected, substituted or unknown."""
        if self.chained or self.redirected or self.substituted or self.unknown or len(self.invocations) != 1:
            return None
        return self.invocations[0]


@lru_cache(maxsize=1)
def _parser() -> Parser:
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _tree(source: bytes) -> Node:
    return _parser().parse(source).root_node


_KEEP_CONTINUATION = frozenset({"raw_string", "comment", "heredoc_body", "heredoc_content", "ansi_c_string"})


def _join_continuations(source: bytes) -> bytes:
    """``source`` with its line continuations (backslash, newline) removed where the shell removes them.

    The grammar treats a continuation as a space, so ``r\\<newline>m`` would be two words.
    """
    if b"\\\n" not in source:
        return source
    root = _tree(source)
    cut: list[int] = []
    for match in re.finditer(rb"(\\+)\n", source):
        if len(match.group(1)) % 2 == 0:
            continue
        at = match.end(1) - 1
        node: Node | None = root.descendant_for_byte_range(at, at + 1)
        while node is not None and node.type not in _KEEP_CONTINUATION:
            node = node.parent
        if node is None:
            cut.append(at)
    for at in reversed(cut):
        source = source[:at] + source[at + 2 :]
    return source


def _harmless_redirect(operator: str, target: str | None) -> bool:
    """A redirection that touches no file: one descriptor copied onto another (``2>&1``, ``>&2``),
    or pointed at ``/dev/null``. An allow rule may cover a command carrying it."""
    if target is None:
        return False
    if operator in {">&", "<&"}:
        return target.isdigit() or target == "-"
    return target == "/dev/null" and operator in {">", ">>", "&>", "&>>", "<", ">|"}


class _Walker:
    """Collects the invocations and facts of one parsed line."""

    def __init__(self, depth: int) -> None:
        self.depth = depth
        self.invocations: list[Invocation] = []
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.chained = self.has_redirect = self.substituted = False
        self.unknown = ""
        self.opaque = ""

    def result(self) -> Line:
        return Line(
            tuple(self.invocations),
            chained=self.chained or len(self.invocations) > 1,
            redirected=self.has_redirect,
            substituted=self.substituted,
            unknown=self.unknown,
            opaque=self.opaque,
            reads=tuple(self.reads),
            writes=tuple(self.writes),
        )

    def not_known(self, why: str, *, opaque: bool = False) -> None:
        self.unknown = self.unknown or why
        if opaque:
            self.opaque = self.opaque or why

    def program(self, root: Node) -> None:
        statements = [c for c in root.named_children if c.type != "comment"]
        if len(statements) > 1 or any(c.type == "&" for c in root.children):
            self.chained = True
        if len(statements) == 1 and statements[0].type not in {"command", "redirected_statement"}:
            self.chained = True
        self.visit(root)

    def visit(self, root: Node) -> None:
        """Walk the tree under ``root`` with a stack (a long chain nests deeper than Python recurses)."""
        stack = [root]
        while stack:
            node = stack.pop()
            kind = node.type
            if kind == "ERROR" or node.is_missing:
                self.not_known("the command is not complete shell syntax", opaque=True)
            if kind == "command":
                later = self.command(node, [])
            elif kind == "redirected_statement":
                later = self.redirected_statement(node)
            elif kind in _REDIRECTS:
                later = self.redirect(node)[1]
            else:
                if kind in {"command_substitution", "process_substitution"}:
                    self.substituted = True
                elif kind in {"subshell", "compound_statement", "function_definition", "negated_command", "pipeline"}:
                    self.chained = True
                later = node.children
            stack.extend(reversed(later))

    def redirected_statement(self, node: Node) -> list[Node]:
        """Note the redirections; return the nodes still to walk."""
        body = node.child_by_field_name("body")
        extra: list[Node] = []
        later: list[Node] = []
        for child in node.named_children:
            if child.type in _REDIRECTS:
                words, inside = self.redirect(child)
                extra.extend(words)
                later.extend(inside)
        if body is not None and body.type == "command":
            return [*self.command(body, extra), *later]
        self.chained = True
        return [*([body] if body is not None else []), *extra, *later]

    def redirect(self, node: Node) -> tuple[list[Node], list[Node]]:
        """Note a redirection and its target; return the words the grammar put after the target (arguments
        of the command), and the nodes still to walk."""
        operator = next((text_of(c) for c in node.children if not c.is_named), "")
        words = [c for c in node.named_children if c.type not in {"file_descriptor", "heredoc_start", "heredoc_end"}]
        if node.type == "file_redirect" and words:
            target = read_word(words[0]).value
            if not _harmless_redirect(operator, target):
                self.has_redirect = True
            if target is not None and not target.isdigit() and target != "-":
                (self.writes if operator in _WRITE_OPERATORS else self.reads).append(target)
            return words[1:], words[:1]
        self.has_redirect = True
        return [], node.named_children

    def command(self, node: Node, extra: list[Node]) -> list[Node]:
        """Add the invocation ``node`` spells; return the nodes still to walk (substitutions in its words)."""
        words: list[Node] = []
        later: list[Node] = []
        for child in node.named_children:
            if child.type == "variable_assignment":
                later.extend(self.assignment(child))
            elif child.type in _REDIRECTS:
                more, inside = self.redirect(child)
                extra.extend(more)
                later.extend(inside)
            elif child.type == "command_name":
                words[:0] = child.named_children[:1]
            elif child.type != "comment":
                words.append(child)
        self.run([read_word(w) for w in (*words, *extra)], open=False)
        return [*words, *extra, *later]

    def assignment(self, node: Node) -> list[Node]:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        name = text_of(name_node) if name_node is not None else ""
        value = read_word(value_node).value if value_node is not None else ""
        if _RISKY_NAME.fullmatch(name) and value not in _HARMLESS_VALUES:
            self.not_known(f"setting {name} before a command changes what runs")
        return node.named_children

    def run(self, words: list[Word], *, open: bool) -> None:
        """Add the invocation ``words`` spell (command word first), through its wrappers."""
        self.reads.extend(_reads(words[1:]))
        layers: list[Command] = []
        transparent = 1
        while words:
            head, rest = words[0], words[1:]
            if head.value is None or head.glob:
                shown = head.value if head.value is not None else "an expansion"
                self.not_known(f"the command word ({shown}) is only known when the shell expands it", opaque=True)
                break
            command = Command.of(head.value, rest, open=open)
            layers.append(command)
            wrapper = _WRAPPERS.get(command.name)
            if wrapper is not None:
                inner = self.unwrap(command.name, wrapper, rest)
                if inner is None:
                    break
                words, open = inner, open or command.name == "xargs"
                if wrapper.transparent and transparent == len(layers):
                    transparent += 1
                continue
            self.special(command, rest)
            break
        if layers:
            self.invocations.append(Invocation(tuple(layers), min(transparent, len(layers))))

    def unwrap(self, name: str, wrapper: _Wrapper, words: list[Word]) -> list[Word] | None:
        """The words of the command ``name`` runs after its own options; None when it runs none."""
        at, operands = 0, wrapper.operands
        while at < len(words):
            text = words[at].value
            if text is None:
                return words[at:]
            if text == "--":
                return words[at + 1 :] or None
            key = text.partition("=")[0]
            if wrapper.assignments and re.fullmatch(r"[A-Za-z_]\w*=.*", text, re.DOTALL):
                if _RISKY_NAME.fullmatch(key) and text.partition("=")[2] not in _HARMLESS_VALUES:
                    self.not_known(f"setting {key} before a command changes what runs")
            elif text.startswith("-") and len(text) > 1:
                if key in wrapper.none_if:
                    return None
                has_value = key in wrapper.takes_value and "=" not in text and at + 1 < len(words)
                value = words[at + 1].value if has_value else None
                option = key if key in wrapper.string else "-" + text[1]
                if option in wrapper.string:
                    string = value if has_value else text.partition("=")[2] or text[2:]
                    self.nested(f"{name} {option} runs a string as a command", string)
                if key in wrapper.takes_value and "=" not in text:
                    at += 1
            elif operands:
                operands -= 1
            else:
                return words[at:]
            at += 1
        return None

    def special(self, command: Command, words: list[Word]) -> None:
        """Commands that run other commands from their words: shells, eval, source, find -exec."""
        name = command.name
        if name in _SHELLS:
            self.shell(name, words)
        elif name in _STRING_RUNNERS:
            texts = [w.value for w in words if name != "trap" or w is words[0]]
            if name == "trap" and (not words or (words[0].value or "").startswith("-")):
                return
            joined = None if any(t is None for t in texts) else " ".join(t for t in texts if t is not None)
            self.nested(f"{name} runs its words as a command", joined)
        elif name == "watch":  # watch [options] command…: the words, joined, go to sh -c
            at = 0
            while at < len(words) and (words[at].value or "").startswith("-"):
                at += 2 if words[at].value in {"-n", "--interval"} else 1
            texts = [w.value for w in words[at:]]
            joined = None if None in texts else " ".join(t for t in texts if t is not None)
            self.nested("watch runs its words as a command", joined)
        elif name in _FILE_RUNNERS:
            self.not_known(f"{name} runs the commands in a file")
        elif name == "find":
            for start, word in enumerate(words):
                if word.value in _FIND_EXEC:
                    end = next((i for i in range(start + 1, len(words)) if words[i].value in {";", "+"}), len(words))
                    if end > start + 1:
                        self.chained = True
                        self.run(words[start + 1 : end], open=False)

    def shell(self, name: str, words: list[Word]) -> None:
        if name == "su":  # su [options] [user] -c string: the string may follow the user
            at = next((i for i, w in enumerate(words) if w.value in {"-c", "--command"}), None)
            if at is not None:
                string = words[at + 1].value if at + 1 < len(words) else None
                self.nested("su -c runs a string as a command", string)
            return
        at, command_flag = 0, False
        while at < len(words):
            text = words[at].value
            if text is None or text == "--" or not (text.startswith("-") or text.startswith("+")) or text in "-+":
                break
            if text in _SHELL_OPTION_ARGS:
                at += 1
            elif not text.startswith("--") and "c" in text[1:]:
                command_flag = True
            at += 1
        if at < len(words) and words[at].value == "--":
            at += 1
        if command_flag:
            string = words[at].value if at < len(words) else None
            self.nested(f"{name} -c runs a string as a command", string)
        elif at >= len(words):
            self.not_known(f"{name} reads the commands it runs from its input", opaque=True)

    def nested(self, why: str, string: str | None) -> None:
        """A string the shell will run as a command line: parsed too when it is a literal."""
        self.not_known(why)
        if string is None:
            self.not_known(why, opaque=True)
            return
        if self.depth >= _MAX_DEPTH:
            self.not_known("commands are nested too deeply to follow", opaque=True)
            return
        inner = _parse(string, self.depth + 1)
        self.invocations.extend(inner.invocations)
        self.reads.extend(inner.reads)
        self.writes.extend(inner.writes)
        self.has_redirect = self.has_redirect or inner.redirected
        self.substituted = self.substituted or inner.substituted
        if inner.opaque:
            self.not_known(inner.opaque, opaque=True)


def _reads(words: list[Word]) -> list[str]:
    """The values of ``words`` that may be paths (with a flag's ``=value`` taken on its own)."""
    out: list[str] = []
    for word in words:
        if word.value is None or not word.value:
            continue
        text = word.value
        if text.startswith("-") and "=" in text:
            text = text.partition("=")[2]
        if text:
            out.append(text)
    return out


def _parse(text: str, depth: int) -> Line:
    source = _join_continuations(text.encode("utf-8", "surrogateescape"))
    walker = _Walker(depth)
    walker.program(_tree(source))
    return walker.result()


@lru_cache(maxsize=512)
def parse_line(text: str) -> Line:
    """What the bash command line ``text`` runs (see the module docstring)."""
    return _parse(text, 0)


@lru_cache(maxsize=512)
def parse_words(text: str) -> tuple[Word, ...] | None:
    """The words of ``text`` when it is one plain command (no chain, redirection or expansion), else None."""
    source = _join_continuations(text.encode("utf-8", "surrogateescape"))
    root = _tree(source)
    statements = [c for c in root.named_children if c.type != "comment"]
    if root.has_error or len(statements) != 1 or statements[0].type != "command":
        return None
    words: list[Word] = []
    for child in statements[0].named_children:
        if child.type == "command_name":
            words[:0] = [read_word(n) for n in child.named_children[:1]]
        elif child.type == "variable_assignment":
            continue
        elif child.type in _REDIRECTS:
            return None
        else:
            words.append(read_word(child))
    if not words or any(w.value is None for w in words):
        return None
    return tuple(words)
