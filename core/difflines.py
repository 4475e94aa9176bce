"""Provides the lines of a diff as Chimera reads and shows them: split at ``\\n`` only.

A diff is read a line at a time: ``+`` added, ``-`` removed, a space for context.
Python's ``str.splitlines`` also breaks lines at ``\\r``, ``\\x0b``, ``\\x0c``,
``\\x1c``-``\\x1e``, ``\\x85``, U+2028 and U+2029, so a line holding one of them
would show as two, and the second half without its ``+`` or ``-``: an added
``echo safe\\rrm -rf x`` would read ``+echo safe`` and then ``rm -rf x`` on a line
that passes for something else. Here a line ends at ``\\n`` only, as git and
``diff`` see it, and every other line break and control character stays inside
its line, shown as ``terminal_safe`` shows it (``\\r``, ``\\x0c``, ``\\u2028``);
tabs stay tabs.

``split_lines`` gives a text's lines as they are, to compare (``ended_lines`` with
their newlines); ``diff_lines`` the lines of a diff ready to show; ``unified_diff``
the diff of two texts, its lines as they are (what a tool records), for
``diff_lines`` to show.
"""

from __future__ import annotations

import difflib

from chimera.core.terminal_text import terminal_safe

__all__ = ["NO_NEWLINE", "diff_lines", "ended_lines", "shown_line", "split_lines", "unified_diff"]

NO_NEWLINE = "\\ No newline at end of file"  # git's and diff's words for a last line without one


def split_lines(text: str) -> list[str]:
    """``text``'s lines, split at ``\\n`` only: a newline ends a line, so one that ends the text starts
    no empty line after it (``""`` has no lines). Every other character stays in its line."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def shown_line(line: str) -> str:
    """One line with every control character and line break in it shown as an escape; tabs kept."""
    return "\t".join(terminal_safe(part, one_line=True) for part in line.split("\t"))


def diff_lines(diff: str) -> list[str]:
    """The lines of ``diff`` (a unified diff, or any text shown as one) to show: split at ``\\n`` only,
    each with its other line breaks and control characters escaped."""
    return [shown_line(line) for line in split_lines(diff)]


def unified_diff(old: str, new: str, name: str) -> str:
    """The unified diff that takes ``old`` to ``new`` (a file called ``name``, headed ``a/name`` and
    ``b/name``), lines compared as they are and split at ``\\n`` only; a last line without a newline is
    followed by ``\\ No newline at end of file``. Empty when they hold the same text. The name is escaped
    on its header line; the lines are kept exact (``diff_lines`` shows them)."""
    label = terminal_safe(name, one_line=True)
    out: list[str] = []
    for line in difflib.unified_diff(ended_lines(old), ended_lines(new), f"a/{label}", f"b/{label}"):
        out.append(line if line.endswith("\n") else f"{line}\n{NO_NEWLINE}\n")
    return "".join(out)


def ended_lines(text: str) -> list[str]:
    """``text``'s lines split at ``\\n`` only, each with its ``\\n`` (the last without one when the text does not
    end in one)."""
    lines = [f"{line}\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    return lines if lines[-1] else lines[:-1]
