"""Provides glob patterns as regular expressions, with ``**`` and ``{a,b}`` as ripgrep reads them.

``*`` and ``?`` stay inside one folder, ``**/`` crosses any number of folders
(none included), ``[...]`` is a character class and ``{a,b}`` an alternation.
A pattern with no ``/`` matches a file's name in any folder. A pattern that
names a hidden part (`.github/**`, `**/.env*`) also searches hidden files.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_matches", "glob_regex", "names_hidden"]

_HIDDEN_PART = re.compile(r"(?:^|[/{,])\.")


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` into a regular expression over posix relative paths (ValueError if invalid)."""
    original = pattern
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
    if depth:
        raise ValueError(f"{original!r} has a `{{` that is never closed")
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as err:
        raise ValueError(f"{original!r} is not a valid glob: {err}") from None


def glob_matches(relative: str, pattern: str) -> bool:
    """True when the posix path ``relative`` matches ``pattern``; ValueError when the pattern is invalid."""
    return glob_regex(pattern).match(relative) is not None


def names_hidden(pattern: str | None) -> bool:
    """True when a part of ``pattern`` starts with a dot (`.github/**`, `.env*`): hidden files are then searched."""
    return bool(pattern) and _HIDDEN_PART.search(pattern or "") is not None
