"""Provides ``plan_edit``: where the ``edit`` tool's ``old`` is in a file's text and what replacing it makes, or
why it cannot be made, for the tool and for the preview of it alike (``change_preview``)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["EditPlan", "line_numbers", "matches", "plan_edit"]


def matches(text: str, old: str) -> list[int]:
    """Where ``old`` starts in ``text``, each match after the one before (they never overlap)."""
    starts = []
    start = text.find(old)
    while start != -1:
        starts.append(start)
        start = text.find(old, start + max(len(old), 1))
    return starts


def line_numbers(text: str, starts: list[int]) -> list[int]:
    """The line (1-based) each of ``starts`` (in order) lies on, counted once through ``text``."""
    lines, line, at = [], 1, 0
    for start in starts:
        line += text.count("\n", at, start)
        at = start
        lines.append(line)
    return lines


@dataclass(frozen=True, slots=True)
class EditPlan:
    """An edit that can be made: ``old`` and ``new`` as they apply to the file (with its line endings) and where
    each occurrence that is replaced starts (``starts``) and the line it starts on (``lines``)."""

    old: str
    new: str
    starts: list[int]
    lines: list[int]

    def apply(self, text: str) -> str:
        """``text`` with the edit made."""
        return text.replace(self.old, self.new, len(self.starts))


def plan_edit(text: str, old: str, new: str, replace_all: bool, shown: str) -> EditPlan | str:
    """The edit ``edit`` makes in ``text`` (the file ``shown``), or why it cannot be made, in a line for the model."""
    if not old:
        return "`old` is empty: give the exact text to replace"
    if old == new:
        return "`old` and `new` are the same: nothing would change"
    if "\r\n" in text:  # keep the file's line endings; the model reads and sends bare \n
        old, new = (s.replace("\r\n", "\n").replace("\n", "\r\n") for s in (old, new))
    starts = matches(text, old)
    if not starts:
        return f"`old` was not found in {shown}: read the file and copy the text exactly"
    where = line_numbers(text, starts[:10])
    if len(starts) > 1 and not replace_all:
        at = ", ".join(str(n) for n in where)
        return (
            f"`old` matches {len(starts)} times in {shown} (lines {at}): "
            "include more surrounding text, or set replace_all"
        )
    return EditPlan(old, new, starts, line_numbers(text, starts))
