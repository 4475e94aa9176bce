"""Provides ``plain_words``: the words of a line that is one plain command, the only kind an allow rule covers.

A whitelist, as Codex's safe-command check is: every node of the parse must
be of a kind known to mean only itself. The line is one command (a trailing
``;`` and comments aside) whose words are bare words, numbers, single-quoted
strings, double-quoted strings holding no expansion, or concatenations of
those, with no unquoted wildcard or brace expansion and no ``$``, backquote
or parenthesis; it sets no variable; its redirections touch no file
(``2>&1``, ``>/dev/null``). Anything else (``$'…'``, ``$((…))``, ``${…}``,
``VAR=x cmd``, a heredoc, a reserved word) is reported, and the line is asked
about.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chimera.core.permissions.shell_words import Word, read_word, text_of

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["RESERVED", "harmless_redirect", "plain_words"]

RESERVED = frozenset(
    {"{", "}", "!", "[[", "]]", "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until"}
    | {"do", "done", "in", "function", "time", "coproc"}
)
_UNSAFE_BARE = frozenset("$`()<>|&;")
_REDIRECTS = frozenset({"file_redirect", "heredoc_redirect", "herestring_redirect"})


def harmless_redirect(operator: str, target: str | None) -> bool:
    """A redirection that touches no file: one descriptor copied onto another (``2>&1``, ``>&2``), or pointed at
    ``/dev/null``."""
    if target is None:
        return False
    if operator in {">&", "<&"}:
        return target.isdigit() or target == "-"
    return target == "/dev/null" and operator in {">", ">>", "&>", "&>>", "<", ">|"}


def _bare_safe(text: str) -> bool:
    at = 0
    while at < len(text):
        if text[at] == "\\":
            at += 2
            continue
        if text[at] in _UNSAFE_BARE:
            return False
        at += 1
    return True


def _plain_piece(node: Node) -> bool:
    kind = node.type
    if kind in {"word", "number"}:
        return _bare_safe(text_of(node))
    if kind == "raw_string":
        return True
    if kind == "string":
        return all(c.type == "string_content" for c in node.named_children)
    if kind == "concatenation":
        return all(_plain_piece(c) for c in node.children)
    return False


def _word(node: Node) -> Word | str:
    """The plain word ``node`` spells, or what keeps it from being one."""
    if not _plain_piece(node):
        return "an expansion or a special form of quoting"
    word = read_word(node)
    if word.value is None:
        return "an expansion or a special form of quoting"
    if word.glob:
        return "a wildcard or a brace expansion"
    return word


def _redirect(node: Node, words: list[Word]) -> str:
    """What keeps the redirection ``node`` from being harmless ("" when it is); words the grammar put after its
    target (arguments of the command) are added to ``words``."""
    if node.type != "file_redirect":
        return "a heredoc or here-string"
    operator = "".join(text_of(c) for c in node.children if not c.is_named)
    targets = [c for c in node.named_children if c.type != "file_descriptor"]
    if not targets:
        return "a redirection to a file"
    target = _word(targets[0])
    if isinstance(target, str) or not harmless_redirect(operator, target.value):
        return "a redirection to a file"
    for extra in targets[1:]:
        word = _word(extra)
        if isinstance(word, str):
            return word
        words.append(word)
    return ""


def plain_words(root: Node) -> tuple[Word, ...] | str:
    """The words of the line parsed as ``root`` when it is one plain command (see the module docstring), else what
    it holds that is not plain ("a chain of commands", "a variable assignment", …)."""
    if root.has_error:
        return "text that is not complete shell syntax"
    statements = [c for c in root.named_children if c.type != "comment"]
    if len(statements) != 1 or any(c.type == "&" for c in root.children):
        return "a chain of commands"
    statement = statements[0]
    redirects: list[Node] = []
    if statement.type == "redirected_statement":
        body = statement.child_by_field_name("body")
        redirects = [c for c in statement.named_children if c.type != "command" and c != body]
        if body is None:
            return "a redirection to a file"
        statement = body
    if statement.type != "command":
        return "a compound command"
    if any(not c.is_named for c in statement.children):
        return "an expansion or a special form of quoting"  # the `$` of `$"…"`, kept apart by the grammar
    words: list[Word] = []
    for child in [*statement.named_children, *redirects]:
        problem = ""
        if child.type == "command_name":
            word = _word(child.named_children[0]) if child.named_child_count == 1 else "an expansion"
            if isinstance(word, str):
                return word
            if word.value in RESERVED:
                return "a reserved word"
            words.insert(0, word)
        elif child.type == "variable_assignment":
            problem = "a variable assignment"
        elif child.type in _REDIRECTS:
            problem = _redirect(child, words)
        elif child.type == "comment":
            continue
        else:
            word = _word(child)
            problem = word if isinstance(word, str) else ""
            if not isinstance(word, str):
                words.append(word)
        if problem:
            return problem
    return tuple(words) if words else "a redirection to a file"
