"""Provides the line search both grep paths share in Python: the worker process runs it over files.

A pattern is compiled once plainly and once with MULTILINE (``wide``), which
finds candidate lines in a whole block at C speed; the plain one then decides on
the line alone. Where a whole-block search could miss a line's match (``\\A``,
``\\Z``, lookaround), each line is searched alone.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable

from chimera.core.tools.walk import text_blocks

__all__ = ["compile_pattern", "search_file", "searchers"]

# Where a whole-block search could miss a line's match, each line is searched alone.
_LINE_BOUND = re.compile(r"\\[AZ]|\(\?<?[=!]")


def compile_pattern(pattern: str, flags: int) -> re.Pattern[str]:
    """Compile without Python's FutureWarning about `[[` and `--` in classes: they keep today's meaning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, flags)


def searchers(pattern: str, ignore_case: bool) -> tuple[re.Pattern[str], re.Pattern[str] | None]:
    """The line expression and, unless lines must be searched alone, its whole-block form."""
    flags = re.IGNORECASE if ignore_case else 0
    regex = compile_pattern(pattern, flags)
    wide = None if _LINE_BOUND.search(pattern) else compile_pattern(pattern, flags | re.MULTILINE)
    return regex, wide


def search_file(
    path: str,
    regex: re.Pattern[str],
    wide: re.Pattern[str] | None,
    emit: Callable[[int, str], None],
    before_block: Callable[[], None] = lambda: None,
) -> None:
    """Call ``emit(number, line)`` for each matching line, unless the file is binary.

    ``before_block`` is called before each block of text is searched.
    """
    blocks = text_blocks(path)
    if blocks is None:
        return
    number = 1
    for text in blocks:
        before_block()
        if wide is None:
            lines = text.split("\n")
            if text.endswith("\n"):
                lines.pop()
            for offset, line in enumerate(lines):
                if regex.search(line):
                    emit(number + offset, line)
        else:
            _search_block(text, number, regex, wide, emit)
        number += text.count("\n")


def _search_block(
    text: str, number: int, regex: re.Pattern[str], wide: re.Pattern[str], emit: Callable[[int, str], None]
) -> None:
    size, pos, counted = len(text), 0, 0
    while pos < size and (found := wide.search(text, pos)) is not None:
        at = found.start()
        if at == size and text.endswith("\n"):
            break
        start = text.rfind("\n", pos, at) + 1 or pos
        end = text.find("\n", at)
        end = size if end < 0 else end
        number += text.count("\n", counted, start)
        counted = start
        line = text[start:end]
        if regex.search(line):
            emit(number, line)
        pos = end + 1
