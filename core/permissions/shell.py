"""Provides ``parse_line``: the simple commands a bash command line runs, as the shell will run them.

The line is parsed with tree-sitter's bash grammar and walked through every
compound form (lists, pipelines, subshells, groups, if/while/for/case,
functions, negation, command and process substitutions, heredoc bodies).
Each simple command becomes an ``Invocation``: its layers, outermost first,
so ``sudo env A=1 rm -rf x`` is ``sudo …``, ``env …`` and ``rm -rf x``. In
each ``Command`` the command word is unquoted and reduced to its base name
(``/bin/'r'm`` is ``rm``), words are brace-expanded as bash does
(``rm -{r,f}`` is ``rm -r -f``), leading assignments are dropped, and words
are told apart as flags and operands (``shell_words.py``).

The wrappers unwrapped (``shell_options.WRAPPERS``: ``env``, ``sudo``,
``timeout``, ``xargs``, ``flock``, ``chrt``, ``strace``, …) have their options
read from a spec; an option not in the spec hides what runs. The commands
that run strings or files (shells, ``eval``, ``trap``, ``source``, ``find
-exec``, git's own options, and the builtins that change what later words
mean: ``alias``, ``set -x``, ``shopt``, ``hash -p``, ``enable``) are read in
``shell_special.py``; ``shell_markers.py`` finds commands bash would run
that the tree does not show. ``shell_plain.py`` says whether the line is one
plain command, the only kind an allow rule covers.

What cannot be decided from the text is reported: ``unknown`` (no allow rule
may cover the line) and ``opaque`` (a deny rule cannot see what runs
either). tree-sitter is imported on first use.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TYPE_CHECKING

from chimera.core.permissions.shell_markers import unseen_commands
from chimera.core.permissions.shell_options import WRAPPERS
from chimera.core.permissions.shell_plain import RESERVED, harmless_redirect, plain_words
from chimera.core.permissions.shell_special import assignment_problem, evaluating_node, special, unwrap
from chimera.core.permissions.shell_words import Command, Word, read_word, read_words, text_of

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = ["Invocation", "Line", "parse_line", "parse_words"]

_DYNAMIC = frozenset(
    {"simple_expansion", "expansion", "command_substitution", "process_substitution", "arithmetic_expansion"}
)
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})
_WRITE_OPERATORS = frozenset({">", ">>", "&>", "&>>", ">|", ">&", "<>"})
_KEYWORD_WRAPPERS = frozenset({"time", "coproc"})  # reserved words: the word after them is a command position
_MAX_DEPTH = 8


@dataclass(frozen=True, slots=True)
class Invocation:
    """One simple command: its layers, outermost first (``sudo rm x``: ``sudo rm x``, then ``rm x``)."""

    layers: tuple[Command, ...]


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
    evaluates: bool = False  # it evaluates strings later (arithmetic, let, [[ ]], declare, read, …)
    expansions: tuple[str, ...] = ()  # the text of every expansion in it ($x, ${x}, $(…), <(…), $((…)))
    assignments: tuple[tuple[str, str | None], ...] = ()  # each NAME=value, the value None when it expands
    plain: tuple[Word, ...] | str = ""  # its words when it is one plain command (shell_plain.py), else why not

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


class _Walker:
    """Collects the invocations and facts of one parsed line."""

    def __init__(self, depth: int, source: bytes) -> None:
        self.depth = depth
        self.source = source
        self.invocations: list[Invocation] = []
        self.reads: list[str] = []
        self.writes: list[str] = []
        self.expansions: list[str] = []
        self.assignments: list[tuple[str, str | None]] = []
        self.chained = self.has_redirect = self.substituted = self.evaluates = False
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
            evaluates=self.evaluates,
            expansions=tuple(self.expansions),
            assignments=tuple(self.assignments),
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
            if evaluating_node(node):
                self.evaluates = True
            if kind in _DYNAMIC:
                self.expansions.append(text_of(node))
            if kind == "command":
                later = self.command(node, [])
            elif kind == "redirected_statement":
                later = self.redirected_statement(node)
            elif kind in _REDIRECTS:
                later = self.redirect(node)[1]
            elif kind == "variable_assignment":
                later = self.assignment(node)
            else:
                if kind in {"command_substitution", "process_substitution"}:
                    self.substituted = True
                elif kind in {"subshell", "compound_statement", "function_definition", "negated_command", "pipeline"}:
                    self.chained = True
                elif kind == "declaration_command":
                    self.declaration(node)
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

    def operator(self, node: Node) -> str:
        """The redirection operator of ``node``; ``<>`` (read and write), which the grammar splits, made whole."""
        token = next((c for c in node.children if not c.is_named), None)
        if token is None:
            return ""
        text = text_of(token)
        before = self.source[token.start_byte - 1 : token.start_byte]
        after = self.source[token.end_byte : token.end_byte + 1]
        if (text == ">" and before == b"<") or (text == "<" and after == b">"):
            return "<>"
        return text

    def redirect(self, node: Node) -> tuple[list[Node], list[Node]]:
        """Note a redirection and its target; return the words the grammar put after the target (arguments
        of the command), and the nodes still to walk."""
        operator = self.operator(node)
        words = [c for c in node.named_children if c.type not in {"file_descriptor", "heredoc_start", "heredoc_end"}]
        words = [w for w in words if w.type != "ERROR"]
        if node.type == "file_redirect" and words:
            target = read_word(words[0]).value
            if not harmless_redirect(operator, target):
                self.has_redirect = True
            if target is not None and not target.isdigit() and target != "-":
                if operator == "<>":
                    self.reads.append(target)
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
            elif self.fd_variable(child):
                self.evaluates = True  # exec {fd}>file: bash assigns the descriptor to the variable named
            elif child.type != "comment":
                words.append(child)
        if any(a.end_byte == b.start_byte for a, b in itertools.pairwise(words)):
            self.not_known("two words the parser tells apart are one word to bash", opaque=True)
        self.run([w for node in (*words, *extra) for w in read_words(node)], open=False)
        return [*words, *extra, *later]

    def fd_variable(self, node: Node) -> bool:
        """Whether ``node`` is ``{name}`` written right before a redirection operator (``{fd}>file``)."""
        after = self.source[node.end_byte : node.end_byte + 1]
        return (
            after in (b"<", b">") and re.fullmatch(r"\{[A-Za-z_]\w*(\[.*\])?\}", text_of(node), re.DOTALL) is not None
        )

    def assignment(self, node: Node) -> list[Node]:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is not None and name_node.type == "subscript":
            self.evaluates = True
            name_node = name_node.child_by_field_name("name") or name_node
        name = text_of(name_node) if name_node is not None else ""
        value = read_word(value_node).value if value_node is not None else ""
        self.assignments.append((name, value))
        problem = assignment_problem(name, value)
        if problem:
            self.not_known(problem[0], opaque=problem[1])
        return node.named_children

    def declaration(self, node: Node) -> None:
        """``declare``, ``export``, ``local``, ``readonly``, ``typeset``: they evaluate, and name variables."""
        self.evaluates = True
        for child in node.named_children:
            if child.type in {"word", "variable_name"}:
                problem = assignment_problem(text_of(child), None)
                if problem:
                    self.not_known(problem[0], opaque=problem[1])

    def run(self, words: list[Word], *, open: bool) -> None:
        """Add the invocation ``words`` spell (command word first), through its wrappers."""
        self.reads.extend(_reads(words[1:]))
        layers: list[Command] = []
        keyword = True  # the first word is where bash looks for reserved words
        while words:
            head, rest = words[0], words[1:]
            if head.value is None or head.glob:
                shown = head.value if head.value is not None else "an expansion"
                self.not_known(f"the command word ({shown}) is only known when the shell expands it", opaque=True)
                break
            nestable = head.value == "time" and all(layer.name == "time" for layer in layers)  # time time cmd
            if keyword and head.value in RESERVED and not nestable and (layers or head.value != "coproc"):
                self.not_known(
                    f"bash reads {head.value!r} there as a reserved word, which is not followed", opaque=True
                )
                break
            if head.value.startswith(("/proc/", "/dev/")):
                self.not_known(f"the program {head.value} is not known from its name", opaque=True)
                break
            command = Command.of(head.value, rest, open=open)
            layers.append(command)
            if re.fullmatch(r"git-[a-z][a-z0-9-]*", command.name):  # git-push is git push
                sub = command.name[4:]
                layers.append(Command.of("git", [Word(sub, sub), *rest], open=open))
            name, spec = command.name, WRAPPERS.get(command.name)
            if spec is None and rest and rest[0].value is not None:  # uv run, bundle exec, …
                name = f"{command.name} {rest[0].value}"
                spec = WRAPPERS.get(name)
                rest = rest[1:] if spec is not None else rest
            if spec is not None:
                inner = unwrap(self, name, spec, rest)
                if inner is None:
                    break
                words, open = inner, open or spec.more_input
                keyword = keyword and command.name in _KEYWORD_WRAPPERS
                continue
            special(self, command, rest)
            break
        if layers:
            self.invocations.append(Invocation(tuple(layers)))

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
        self.expansions.extend(inner.expansions)
        self.assignments.extend(inner.assignments)
        self.has_redirect = self.has_redirect or inner.redirected
        self.substituted = self.substituted or inner.substituted
        self.evaluates = self.evaluates or inner.evaluates
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
    root = _tree(source)
    walker = _Walker(depth, source)
    walker.program(root)
    hidden = unseen_commands(root, source, evaluates=walker.evaluates)
    if hidden:
        walker.not_known(hidden, opaque=True)
    line = walker.result()
    if depth == 0:
        line = replace(line, plain=plain_words(root))
    return line


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
