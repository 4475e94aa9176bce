"""Provides ``unseen_commands``: where bash would run a command that the parse tree does not show.

tree-sitter's grammar reads some text as plain strings that bash runs as
commands: ``$(…)`` inside single quotes in an arithmetic expression or an
array subscript (``$(( '$(rm x)' ))``, ``${a['$(rm x)']}``), inside ``${x:-…}``,
backquotes nested with backslashes, ``${ cmd; }``. Every ``$(``, backquote,
``<(``, ``>(`` and ``${`` followed by a blank or ``|`` in the source is checked:
it must open a substitution the walker follows, or sit where bash reads it
as plain text (single quotes, a backslash, a quoted heredoc, a comment) and
not inside an expression bash evaluates.

Bash also evaluates strings later, from variables: an arithmetic expression
expands ``$(…)`` in the values of the variables it names, as do ``let``,
``[[ … -eq … ]]``, ``declare -n`` names, ``${!v}``, ``printf -v`` and ``read``
targets. So in a line that holds such an evaluation (``evaluates``), a literal
holding a backquote, or literals holding ``$`` and ``(`` between them, count
as hidden too.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from chimera.core.permissions.shell_words import literal_text, text_of

if TYPE_CHECKING:
    from tree_sitter import Node

__all__ = ["unseen_commands"]

_MARKER = re.compile(rb"\$\(|`|[<>]\(|\$\{[\s|]")
_SUBSTITUTIONS = frozenset({"command_substitution", "process_substitution"})
# Nodes whose text bash evaluates again (arithmetic, subscripts, [[ ]], ${…} words).
_EVALUATED = frozenset(
    {
        "expansion",
        "arithmetic_expansion",
        "subscript",
        "test_command",
        "regex",
        "c_style_for_statement",
        "binary_expression",
        "unary_expression",
        "ternary_expression",
        "postfix_expression",
        "parenthesized_expression",
    }
)
_INERT = frozenset({"raw_string", "ansi_c_string"})
_LITERALS = frozenset({"word", "raw_string", "ansi_c_string", "string_content", "heredoc_body", "heredoc_content"})


def _opens(node: Node, at: int) -> bool:
    """Whether the token at ``at`` opens (or closes, for backquotes) a substitution or arithmetic the walker reads."""
    parent = node.parent
    if node.is_named or parent is None:
        return False
    if parent.type in _SUBSTITUTIONS or parent.type == "arithmetic_expansion":
        return at in (parent.start_byte, parent.end_byte - 1)
    return False


def _escaped(source: bytes, at: int) -> bool:
    count = 0
    while at - count - 1 >= 0 and source[at - count - 1] == 0x5C:
        count += 1
    return count % 2 == 1


def _quoted_heredoc(body: Node) -> bool:
    redirect = body.parent
    if redirect is None:
        return False
    start = next((c for c in redirect.children if c.type == "heredoc_start"), None)
    return start is not None and any(q in (start.text or b"") for q in (b"'", b'"', b"\\"))


def _marker_problem(root: Node, source: bytes, at: int) -> str:
    node = root.descendant_for_byte_range(at, at + 1)
    if node is None or _opens(node, at):
        return ""
    kinds: list[str] = []
    backquoted = False
    current: Node | None = node
    while current is not None:
        if current.type == "comment":
            return ""
        if current.type in _SUBSTITUTIONS:
            backquoted = (current.text or b"").startswith(b"`")
            break
        kinds.append(current.type)
        current = current.parent
    what = source[at : at + 2].decode("utf-8", "replace")
    if any(kind in _EVALUATED for kind in kinds):
        return f"bash evaluates the text holding {what} here and may run a command from it"
    escaped = _escaped(source, at)
    if backquoted and escaped:
        return "a command nested in backquotes with backslashes is not followed"
    if kinds and kinds[0] in _INERT:
        return ""
    if kinds and kinds[0] == "heredoc_body" and node.parent is not None and _quoted_heredoc(node):
        return ""
    if escaped:
        return ""
    return f"the text holding {what} is not parsed as bash will run it"


def _evaluated_literal(root: Node) -> bool:
    """Whether the literal text of the line holds a backquote, or a ``$`` and a ``(`` that an evaluation could join
    (``a='$'; b='(rm x)'; let "i[$a$b]"``)."""
    dollar = paren = False
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type in _LITERALS and not (node.type == "heredoc_body" and node.named_child_count):
            text = literal_text(node) if node.type == "ansi_c_string" else text_of(node)
            if "`" in text or "$(" in text:
                return True
            dollar = dollar or "$" in text
            paren = paren or "(" in text
            if dollar and paren:
                return True
        stack.extend(node.children)
    return False


def unseen_commands(root: Node, source: bytes, *, evaluates: bool) -> str:
    """Why bash may run a command from the line ``source`` (parsed as ``root``) that its tree does not show ("" when
    it shows them all); ``evaluates``: the line holds something that evaluates strings later."""
    for match in _MARKER.finditer(source):
        problem = _marker_problem(root, source, match.start())
        if problem:
            return problem
    if evaluates and any(c in source for c in b"$`\\") and _evaluated_literal(root):
        return "a literal holding $( or a backquote is in a line that evaluates strings, so bash may run it"
    return ""
