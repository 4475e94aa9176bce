"""Provides ``too_deep``: the line where a TOML text nests past ``DEEPEST`` levels, found before a parser reads it.

Python's ``tomllib`` recurses once a level into arrays and inline tables (a few hundred levels overflow
its stack: RecursionError), and takes time quadratic in the parts of a dotted key or table header (a
key 100,000 parts long takes minutes). Chimera's TOML files (settings, themes) need a few levels, so a
file that nests deeper is refused with the line it happens on, in time linear in its size, before the
parser sees it. Strings and comments are left out of the count: brackets and dots there mean nothing.
"""

from __future__ import annotations

import re

__all__ = ["DEEPEST", "too_deep"]

DEEPEST = 32  # levels of nesting a file of Chimera's may use; its own need two or three
# Strings (multi-line first, as TOML reads them) and comments.
_INERT = re.compile(r'"""(?:[^\\]|\\.)*?"""|\'\'\'.*?\'\'\'|"(?:[^"\\\n]|\\.)*"|\'[^\'\n]*\'|#[^\n]*', re.DOTALL)
_NESTING = re.compile(r"[\[\]{}\n.]")


def too_deep(text: str) -> int | None:
    """The line (from 1) where ``text`` nests more than ``DEEPEST`` levels (arrays and inline tables inside
    one another, or the parts of one dotted key or table header), or None."""
    bare = _INERT.sub(lambda found: "\n" * found.group().count("\n"), text)
    depth = dots = 0
    line = 1
    for mark in _NESTING.finditer(bare):
        char = mark.group()
        if char == "\n":
            line, dots = line + 1, 0
        elif char == ".":
            dots += 1
        elif char in "[{":
            depth += 1
        else:
            depth -= 1
        if depth > DEEPEST or dots >= DEEPEST:
            return line
    return None
