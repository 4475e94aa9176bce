"""Provides glob patterns as regular expressions, with ``**`` and ``{a,b}`` as ripgrep reads them.

``*`` and ``?`` stay inside one folder, ``**/`` crosses any number of folders
(none included), ``[...]`` is a character class and ``{a,b}`` an alternation.
A pattern with no ``/`` matches a file's name in any folder.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_matches", "glob_regex"]


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` into a regular expression over posix relative paths."""
    if "/" not in pattern.rstrip("/") and not pattern.startswith("**"):
        pattern = "**/" + pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out) + r"\Z")


def glob_matches(relative: str, pattern: str) -> bool:
    """True when the posix path ``relative`` matches ``pattern``."""
    return glob_regex(pattern).match(relative) is not None
