"""Provides ``expand_braces``: bash's brace expansion of one word, done as bash does it.

A word is given as units: one character each, with whether it was quoted
(quoted characters, and what only an expansion yields, are never special).
``a{b,c}d`` is ``abd acd``, ``{1..3}`` is ``1 2 3``, ``x{a,{b,c}}`` is ``xa xb
xc``; a brace with no unquoted comma and no sequence is literal (``{}``,
``@{u}``). The code follows bash's ``braces.c`` (``brace_expand``,
``brace_gobbler``, ``expand_seqterm``). What it does not model exactly (a
sequence with quotes or an unusual form, or more than ``_MOST`` words) gives
None: the caller then treats the word as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Unit", "expand_braces"]

_MOST = 256  # words one expansion may give before it is treated as unknown
_INT = re.compile(r"[-+]?\d+")


@dataclass(frozen=True, slots=True)
class Unit:
    """One character of a word; ``quoted`` when the shell will not treat it as special (None text: an expansion)."""

    text: str | None
    quoted: str = ""  # "" bare, "\\" escaped by a backslash, "'" inside quotes (or an expansion)


def _is(unit: Unit, char: str) -> bool:
    return not unit.quoted and unit.text == char


def _blank(units: list[Unit], at: int) -> bool:
    return at < 0 or at >= len(units) or (not units[at].quoted and units[at].text in {" ", "\t", "\n"})


def _find_open(units: list[Unit], start: int) -> int | None:
    """The first unquoted ``{`` from ``start`` that bash takes as a brace (a lone ``{}`` at a word's start is not)."""
    for at in range(start, len(units)):
        if _is(units[at], "{"):
            if _blank(units, at - 1) and (_blank(units, at + 1) or _is(units[at + 1], "}")):
                continue
            return at
    return None


def _find_close(units: list[Unit], start: int, satisfy: str) -> int | None:
    """The index of the unquoted ``satisfy`` at nesting depth 0 from ``start`` (``}`` or ``,``), as bash's
    ``brace_gobbler``: a ``}`` closes only after a comma or a ``..`` at depth 0 (before that it is a character)."""
    depth = 0
    commas = 0 if satisfy == "}" else 1
    for at in range(start, len(units)):
        unit = units[at]
        if unit.quoted:
            continue
        if unit.text == satisfy and depth == 0 and commas:
            return at
        if unit.text == "{":
            depth += 1
        elif unit.text == "}" and depth:
            depth -= 1
        elif depth == 0 and (unit.text == "," or (unit.text == "." and _dots(units, at))):
            commas += 1
    return None


def _dots(units: list[Unit], at: int) -> bool:
    """Whether a ``..`` not followed by ``}`` starts at ``at``."""
    following = units[at + 1 : at + 3]
    return len(following) >= 1 and _is(following[0], ".") and not (len(following) == 2 and _is(following[1], "}"))


def _sequence(amble: list[Unit]) -> list[list[Unit]] | None:
    """``{x..y[..step]}`` with integers or single letters, as bash's ``expand_seqterm``; None when not one."""
    if any(u.quoted or u.text is None for u in amble):
        return None
    parts = "".join(u.text or "" for u in amble).split("..")
    if len(parts) not in (2, 3):
        return None
    if len(parts) == 3 and not _INT.fullmatch(parts[2]):
        return None
    step = abs(int(parts[2])) if len(parts) == 3 else 1
    step = step or 1
    left, right = parts[0], parts[1]
    if _INT.fullmatch(left) and _INT.fullmatch(right):
        first, last = int(left), int(right)
        width = 0
        if any(re.match(r"[-+]?0\d", p) for p in (left, right)):
            width = max(len(left), len(right))
        values = [f"{n:0{width}d}" for n in _steps(first, last, step)] if width else None
        values = values or [str(n) for n in _steps(first, last, step)]
    elif len(left) == 1 and len(right) == 1 and left.isascii() and left.isalpha() and right.isascii():
        if not right.isalpha():
            return None
        values = [chr(n) for n in _steps(ord(left), ord(right), step)]
    else:
        return None
    if len(values) > _MOST:
        return None
    return [[Unit(char) for char in value] for value in values]


def _steps(first: int, last: int, step: int) -> list[int]:
    if abs(last - first) // step > _MOST:
        return list(range(_MOST + 1))
    return list(range(first, last + 1, step)) if first <= last else list(range(first, last - 1, -step))


def expand_braces(units: list[Unit]) -> list[list[Unit]] | None:
    """The words bash's brace expansion makes of ``units`` (itself alone when it holds none); None when unsure."""
    search = 0
    while True:  # the first `{` that has its `}` (a `}` right after the `{` is a plain character)
        opening = _find_open(units, search)
        if opening is None:
            return [units]
        closing = _find_close(units, opening + 1, "}")
        if closing is not None:
            break
        search = opening + 1
    amble = units[opening + 1 : closing]
    tack: list[list[Unit]] | None
    if any(u.quoted not in ("", "\\") and u.text == "," for u in amble):
        return None  # bash's test for a comma here sees some quoted ones: not modelled
    if not any(_is(u, ",") for u in amble):
        tack = _sequence(amble)
        if tack is None:
            if closing + 1 >= len(units):
                return [units]
            tack = [units[opening : closing + 1]]
    else:
        tack = []
        start = 0
        while True:
            comma = _find_close(amble, start, ",")
            part = amble[start:comma] if comma is not None else amble[start:]
            inner = expand_braces(part)
            if inner is None:
                return None
            tack.extend(inner)
            if comma is None:
                break
            start = comma + 1
    preamble = units[:opening]
    result = [preamble + t for t in tack]
    postamble = units[closing + 1 :]
    if postamble:
        rest = expand_braces(postamble)
        if rest is None:
            return None
        result = [r + p for r in result for p in rest]
    return result if len(result) <= _MOST else None
