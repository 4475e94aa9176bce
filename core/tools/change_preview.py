"""Provides ``preview_write`` and ``preview_edit``: what a ``write`` or ``edit`` call would do to a file as it is
now, for the person asked to allow it.

A preview is a unified diff at the file's real line numbers, with three lines of context, its lines as they
are (split at ``\\n`` only: ``difflines.diff_lines`` shows them): a new file is all added lines, an edit with
``replace_all`` shows every place it changes, and a call that would fail as the file is now (``old`` not in
it, or in it more than once; no such file; a folder; not UTF-8) says so in a first line marked ``✗``, then
shows the change it asks for on its own.

It is bounded, never slow nor huge, whatever the file and the call: a file over :data:`MAX_READ` bytes is
not compared (a line says so); a changed stretch is compared line by line only up to :data:`COMPARED` lines a
side (past that it shows as removed, then added: ``difflib`` can take seconds on long stretches of repeating
lines); and the preview stops at :data:`MAX_LINES` lines or :data:`MAX_CHARS` characters, its last line
saying it was cut. Nothing here raises: a preview that cannot be made is a line saying why.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chimera.core.difflines import NO_NEWLINE, ended_lines
from chimera.core.errors import ChimeraError
from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.edit_plan import EditPlan, plan_edit
from chimera.core.tools.files import NotRegularFile, open_regular, special_kind
from chimera.core.tools.paths import display_path, resolve_in_workspace

__all__ = ["COMPARED", "CONTEXT", "CUT", "MAX_CHARS", "MAX_LINES", "MAX_READ", "preview_edit", "preview_write"]

CONTEXT = 3  # lines of context around each change
MAX_READ = 4 * 1024 * 1024  # bytes: a larger file is not read to place the change
COMPARED = 2_000  # lines a side a changed stretch is compared line by line within
MAX_LINES = 400  # lines of preview, at most
MAX_CHARS = 20_000  # characters of preview, at most
CUT = "… the preview stops here: the change goes on"
FAILS = "✗ "  # the mark of a line saying the call would fail


def preview_write(workspace: Path, path: str, content: str) -> str:
    """What ``write(path, content)`` would do to the file in ``workspace`` as it is now."""
    try:
        target = resolve_in_workspace(workspace, path)
    except ChimeraError as err:
        return f"{FAILS}this write would fail: {err}"
    shown = display_path(workspace, target)
    if not os.path.lexists(target):
        folder = next(parent for parent in target.parents if os.path.lexists(parent))  # the workspace, at least
        if not folder.is_dir():
            return f"{FAILS}this write would fail: {display_path(workspace, folder)} is a file, not a folder"
        return _diff("", content, shown)
    current = _current(target, shown)
    if isinstance(current, _Unread):
        if current.fails_write:
            return f"{FAILS}this write would fail: {current.why}"
        lines = len(ended_lines(content))
        return f"{current.why}: this write replaces it with {lines} line{'' if lines == 1 else 's'}"
    if current == content:
        return f"{shown} already holds this text: writing it changes nothing"
    return _diff(current, content, shown)


def preview_edit(workspace: Path, path: str, old: str, new: str, replace_all: bool) -> str:
    """What ``edit(path, old, new, replace_all)`` would do to the file in ``workspace`` as it is now."""
    try:
        target = resolve_in_workspace(workspace, path)
    except ChimeraError as err:
        return _asked(f"this edit would fail: {err}", old, new, path)
    shown = display_path(workspace, target)
    if not os.path.lexists(target):
        return _asked(f"this edit would fail: {shown} does not exist (write creates a file)", old, new, shown)
    current = _current(target, shown)
    if isinstance(current, _Unread):
        return _asked(f"this edit would fail: {current.why}" if current.fails_edit else current.why, old, new, shown)
    plan = plan_edit(current, old, new, replace_all, shown)
    if isinstance(plan, str):
        return _asked(f"this edit would fail: {plan}", old, new, shown)
    return _placed(current, plan, shown)


@dataclass(frozen=True, slots=True)
class _Unread:
    """Why a file's text is not compared, and whether a write or an edit would fail on it."""

    why: str
    fails_write: bool = True
    fails_edit: bool = True


def _current(path: Path, shown: str) -> str | _Unread:
    """The file's text, or why it is not read: a folder, a FIFO or device, too large, not UTF-8."""
    try:
        kind = special_kind(os.stat(path).st_mode)
        if kind is not None:
            return _Unread(NotRegularFile(kind).describe(shown))
        with open_regular(path) as fh:  # a FIFO swapped in meanwhile is refused, never waited on
            raw = fh.read(MAX_READ + 1)
            size = os.fstat(fh.fileno()).st_size
    except NotRegularFile as err:
        return _Unread(err.describe(shown))
    except OSError as err:
        return _Unread(f"{shown} cannot be read ({err.strerror or err})")
    if len(raw) > MAX_READ:
        megabytes = max(size, len(raw)) / (1024 * 1024)
        return _Unread(f"{shown} ({megabytes:.1f} MB) is too large to show the change in place", False, False)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return _Unread(f"{shown} is not UTF-8 text", fails_write=False)


def _asked(note: str, old: str, new: str, shown: str) -> str:
    """A line saying why the change is not placed in the file, then the change asked for on its own."""
    mark = FAILS if note.startswith("this edit would fail") else ""
    return f"{mark}{note}; the change asked for, on its own:\n{_diff(old, new, shown)}"


# --- the diff ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Span:
    """Lines ``a[a0:a1]`` of the file become ``b[b0:b1]``; every line outside the spans stays, in order."""

    a0: int
    a1: int
    b0: int
    b1: int


def _diff(old: str, new: str, shown: str) -> str:
    """The preview of ``old`` becoming ``new``: the lines both begin and end with stay; what is between changes."""
    a, b = ended_lines(old), ended_lines(new)
    top = 0
    while top < len(a) and top < len(b) and a[top] == b[top]:
        top += 1
    end = 0
    while end < len(a) - top and end < len(b) - top and a[-1 - end] == b[-1 - end]:
        end += 1
    return _render(a, b, [_Span(top, len(a) - end, top, len(b) - end)], shown)


def _placed(text: str, plan: EditPlan, shown: str) -> str:
    """The preview of ``plan`` made in ``text``: each place it changes, the lines around it as they are."""
    spans: list[_Span] = []
    size = len(plan.old)
    line = counted = 0  # the line (0-based) that starts at ``counted``
    delta = 0  # how many lines the spans so far add
    starts = plan.starts[: MAX_LINES + 1]  # each changes a line at least: the preview stops before the rest
    index = 0
    while index < len(starts):
        first = text.rfind("\n", 0, starts[index]) + 1  # the region: whole lines, from the first match's on
        last = index
        stop = _line_end(text, starts[index] + size)
        while last + 1 < len(starts) and starts[last + 1] < stop:  # a match on the region's lines joins it
            last += 1
            stop = _line_end(text, starts[last] + size)
        line += text.count("\n", counted, first)
        counted = first
        pieces, at = [], first
        for start in starts[index : last + 1]:
            pieces += [text[at:start], plan.new]
            at = start + size
        pieces.append(text[at:stop])
        old_lines, new_lines = len(ended_lines(text[first:stop])), len(ended_lines("".join(pieces)))
        spans.append(_Span(line, line + old_lines, line + delta, line + delta + new_lines))
        delta += new_lines - old_lines
        index = last + 1
    return _render(ended_lines(text), ended_lines(plan.apply(text)), spans, shown)


def _line_end(text: str, at: int) -> int:
    """Where the line holding ``at`` ends, after its ``\\n`` (the text's end when no ``\\n`` follows)."""
    found = text.find("\n", at)
    return len(text) if found == -1 else found + 1


class _Full(Exception):
    """The preview has all the lines or characters it may hold."""


class _Out:
    """The preview's lines, bounded: :meth:`add` raises _Full once it would pass a bound."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.chars = 0

    def add(self, line: str) -> None:
        if len(self.lines) >= MAX_LINES or self.chars + len(line) > MAX_CHARS:
            raise _Full
        self.lines.append(line)
        self.chars += len(line) + 1

    def each(self, mark: str, lines: Iterable[str]) -> None:
        for line in lines:
            if line.endswith("\n"):
                self.add(mark + line[:-1])
            else:  # the file's last line, without a newline
                self.add(mark + line)
                self.add(NO_NEWLINE)


def _render(a: list[str], b: list[str], spans: list[_Span], shown: str) -> str:
    """The unified diff of the lines ``a`` becoming ``b`` where ``spans`` say, each change with its context."""
    spans = _joined(finer for span in spans for finer in _refined(a, b, span))
    if not spans:
        return f"{shown} would not change"
    out = _Out()
    label = terminal_safe(shown, one_line=True)
    try:
        out.add(f"--- a/{label}")
        out.add(f"+++ b/{label}")
        for group in _hunks(spans):
            first, last = group[0], group[-1]
            a_lo, a_hi = max(0, first.a0 - CONTEXT), min(len(a), last.a1 + CONTEXT)
            b_lo, b_hi = first.b0 - (first.a0 - a_lo), last.b1 + (a_hi - last.a1)
            out.add(f"@@ -{_range(a_lo, a_hi)} +{_range(b_lo, b_hi)} @@")
            at = a_lo
            for span in group:
                out.each(" ", a[at : span.a0])
                out.each("-", a[span.a0 : span.a1])
                out.each("+", b[span.b0 : span.b1])
                at = span.a1
            out.each(" ", a[at:a_hi])
    except _Full:
        out.lines.append(CUT)
    return "\n".join(out.lines) + "\n"


def _refined(a: list[str], b: list[str], span: _Span) -> list[_Span]:
    """``span`` as the smaller spans a line-by-line comparison finds in it, when it is short enough to compare."""
    if span.a1 - span.a0 > COMPARED or span.b1 - span.b0 > COMPARED:
        return [span] if (span.a0, span.b0) != (span.a1, span.b1) else []
    before, after = a[span.a0 : span.a1], b[span.b0 : span.b1]
    return [
        _Span(span.a0 + i1, span.a0 + i2, span.b0 + j1, span.b0 + j2)
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after).get_opcodes()
        if tag != "equal"
    ]


def _joined(spans: Iterable[_Span]) -> list[_Span]:
    """``spans`` with each one that starts where the one before ends joined to it (its lines removed, then added,
    together)."""
    out: list[_Span] = []
    for span in spans:
        if out and span.a0 == out[-1].a1 and span.b0 == out[-1].b1:
            out[-1] = _Span(out[-1].a0, span.a1, out[-1].b0, span.b1)
        else:
            out.append(span)
    return out


def _hunks(spans: list[_Span]) -> list[list[_Span]]:
    """The spans gathered into hunks: two whose context would touch share one."""
    groups: list[list[_Span]] = []
    for span in spans:
        if groups and span.a0 - groups[-1][-1].a1 <= 2 * CONTEXT:
            groups[-1].append(span)
        else:
            groups.append([span])
    return groups


def _range(lo: int, hi: int) -> str:
    """A hunk's range as unified diffs write it: ``start,count`` (``start`` alone for one line; the line
    before, and 0, for none)."""
    count = hi - lo
    if count == 1:
        return str(lo + 1)
    return f"{lo if count == 0 else lo + 1},{count}"
