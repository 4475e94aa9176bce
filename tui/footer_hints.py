"""Provides what the footer says: the keys that matter now, most useful first, and which fit a width.

:func:`hints` reads the command registry (``tui.commands.key_hints``: the commands that work now and have
keys) and adds what the input's own keys do now (enter sends or steers, tab queues while a run works);
:func:`fit` keeps the first hints that fit a width, whole. No Textual here.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len

from chimera.tui.commands import Facts, key_hints

__all__ = ["GAP", "fit", "hints"]

GAP = "  "  # between two hints
_FIRST = ("esc", "ctrl+q")  # command keys shown before the input's own: stopping and leaving come first


def hints(facts: Facts) -> list[tuple[str, str]]:
    """(key, what it does) for each key that works now, most useful first."""
    commands = key_hints(facts)
    first = [hint for hint in commands if hint[0] in _FIRST]
    first.sort(key=lambda hint: _FIRST.index(hint[0]))
    typing = [("enter", "steer"), ("tab", "queue next")] if facts.running else [("enter", "send")]
    rest = [hint for hint in commands if hint not in first]
    return [*first[:1], *typing, *first[1:], *rest] if facts.running else [*typing, *first, *rest]


def fit(shown: Sequence[tuple[str, str]], width: int) -> list[tuple[str, str]]:
    """The first hints of ``shown`` that fit ``width`` cells whole (``key title``, :data:`GAP` between)."""
    kept: list[tuple[str, str]] = []
    used = 0
    for key, title in shown:
        size = cell_len(key) + 1 + cell_len(title) + (cell_len(GAP) if kept else 0)
        if used + size > width:
            break
        kept.append((key, title))
        used += size
    return kept
