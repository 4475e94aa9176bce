"""A write or an edit asked about shows what it would do to the file as it is now: a unified diff at the file's
real line numbers with three lines of context (a new file all added, every place a replace_all changes), a first
line saying so when the call would fail, and a bounded preview whatever the file (``core/tools/change_preview``);
the permission question carries it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chimera.core.events import PermissionRequested, StepEvent
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.base import ToolContext
from chimera.core.tools.change_preview import CUT, MAX_CHARS, MAX_LINES, MAX_READ, preview_edit, preview_write
from chimera.core.tools.edit import Edit
from chimera.core.tools.executor import Executor, ToolCall
from tests.diff_helpers import patched

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "twenty.txt").write_text(TWENTY)
    return root


def test_an_edit_at_line_5_shows_its_hunk_at_line_5_with_context(ws: Path) -> None:
    """Line 5 of 20 changed: the hunk starts at line 2 with the three lines before and after it."""
    assert preview_edit(ws, "twenty.txt", "line 5\n", "line five\n", False) == (
        "--- a/twenty.txt\n+++ b/twenty.txt\n@@ -2,7 +2,7 @@\n"
        " line 2\n line 3\n line 4\n-line 5\n+line five\n line 6\n line 7\n line 8\n"
    )


def test_a_replace_all_shows_every_place_it_changes(ws: Path) -> None:
    """Lines 1 and 10-19 hold "line 1": two hunks, each at its place; the lines around them as they are."""
    preview = preview_edit(ws, "twenty.txt", "line 1", "LINE 1", True)
    assert [line for line in preview.splitlines() if line.startswith("@@")] == ["@@ -1,4 +1,4 @@", "@@ -7,14 +7,14 @@"]
    assert [line for line in preview.splitlines() if line.startswith("+L")] == [
        "+LINE 1",
        *(f"+LINE 1{n}" for n in range(10)),
    ]
    assert patched(TWENTY, preview) == TWENTY.replace("line 1", "LINE 1")


def test_a_new_file_is_all_added_lines(ws: Path) -> None:
    """write to a path that does not exist: every line added, from line 1."""
    assert preview_write(ws, "sub/new.py", "a = 1\nb = 2") == (
        "--- a/sub/new.py\n+++ b/sub/new.py\n@@ -0,0 +1,2 @@\n+a = 1\n+b = 2\n\\ No newline at end of file\n"
    )


def test_a_write_over_a_file_shows_what_changes_in_it(ws: Path) -> None:
    """write over the 20 lines with line 12 changed: one hunk at line 9, the rest unchanged and unshown."""
    content = TWENTY.replace("line 12\n", "line twelve\n")
    preview = preview_write(ws, "twenty.txt", content)
    assert preview.splitlines()[2] == "@@ -9,7 +9,7 @@"
    assert patched(TWENTY, preview) == content
    assert preview_write(ws, "twenty.txt", TWENTY) == "twenty.txt already holds this text: writing it changes nothing"


@pytest.mark.parametrize(
    ("old", "replace_all", "said"),
    [
        ("line 99\n", False, "✗ this edit would fail: `old` was not found in twenty.txt"),
        ("line 1", False, "✗ this edit would fail: `old` matches 11 times in twenty.txt (lines 1, 10, 11"),
        ("", False, "✗ this edit would fail: `old` is empty"),
    ],
    ids=["not found", "ambiguous", "empty"],
)
def test_an_edit_that_would_fail_says_so_then_shows_the_change_asked_for(
    ws: Path, old: str, replace_all: bool, said: str
) -> None:
    """`old` not in the file, in it more than once, or empty: the first line says the edit would fail and why,
    then the change asked for on its own."""
    preview = preview_edit(ws, "twenty.txt", old, "new text\n", replace_all)
    first, rest = preview.split("\n", 1)
    assert first.startswith(said)
    assert first.endswith("the change asked for, on its own:")
    assert "+new text" in rest.splitlines()


def test_what_is_not_a_text_file_in_the_workspace_is_said_in_a_line(ws: Path) -> None:
    """A missing file, a folder, a FIFO (never opened, never waited on), a path outside the workspace or under a
    file, a file that is not UTF-8 or one too large to read: a line says what, and whether the call would fail."""
    os.mkfifo(ws / "pipe")
    (ws / "folder").mkdir()
    (ws / "latin1.txt").write_bytes(b"caf\xe9\n")
    with (ws / "large.txt").open("wb") as fh:
        fh.truncate(MAX_READ + 1)
    assert preview_edit(ws, "gone.txt", "a", "b", False).startswith(
        "✗ this edit would fail: gone.txt does not exist (write creates a file)"
    )
    assert preview_write(ws, "folder", "x") == "✗ this write would fail: folder is a folder, not a regular file"
    assert preview_write(ws, "pipe", "x") == "✗ this write would fail: pipe is a named pipe (FIFO), not a regular file"
    assert preview_write(ws, "../outside.txt", "x").startswith("✗ this write would fail: '../outside.txt' is outside")
    under_a_file = preview_write(ws, "twenty.txt/inside.txt", "x")
    assert under_a_file == "✗ this write would fail: twenty.txt is a file, not a folder"
    assert preview_edit(ws, "latin1.txt", "caf", "cafe", False).startswith(
        "✗ this edit would fail: latin1.txt is not UTF-8 text;"
    )
    assert preview_write(ws, "latin1.txt", "x\n") == "latin1.txt is not UTF-8 text: this write replaces it with 1 line"
    assert preview_edit(ws, "large.txt", "a", "b", False).startswith(
        "large.txt (4.0 MB) is too large to show the change in place; the change asked for, on its own:"
    )


def test_a_huge_change_gives_a_cut_preview(ws: Path) -> None:
    """A 200,000-line rewrite of lines that repeat (a diff that takes difflib minutes) and an edit of a line in
    every one of them each give at most MAX_LINES lines and MAX_CHARS characters, ending where they were cut."""
    (ws / "big.txt").write_text("".join(f"l{n % 150}\n" for n in range(200_000)))
    rewrite = "".join(f"l{n * 7 % 150}\n" for n in range(200_000))
    for preview in (
        preview_write(ws, "big.txt", rewrite),
        preview_edit(ws, "big.txt", "l", "L", True),
        preview_write(ws, "new.txt", "x" * 100 + "\n" * 1_000_000),
    ):
        lines = preview.splitlines()
        assert len(lines) <= MAX_LINES + 1
        assert len(preview) <= MAX_CHARS + len(CUT) + 2
        assert lines[-1] == CUT


def test_a_file_with_crlf_endings_is_edited_as_the_tool_does(ws: Path) -> None:
    """The model sends bare newlines; the file has CRLF: the preview places the change as the edit makes it."""
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    preview = preview_edit(ws, "dos.txt", "two\n", "2\n", False)
    assert patched("one\r\ntwo\r\nthree\r\n", preview) == "one\r\n2\r\nthree\r\n"


TEXT = st.lists(st.sampled_from(["a", "b", "c", "\n", "\n", "\r\n", "ab\n"]), max_size=40).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, cut=st.tuples(st.integers(0, 40), st.integers(1, 6)), new=TEXT, replace_all=st.booleans())
def test_an_edit_preview_is_the_edit_made(
    tmp_path_factory: pytest.TempPathFactory, text: str, cut: tuple[int, int], new: str, replace_all: bool
) -> None:
    """Any file and any edit of a piece of it: the preview, applied as patch(1) applies it, gives the file the
    edit tool leaves (its headers at the right lines in the old file and the new), or says the edit would fail
    when the tool refuses it."""
    ws = tmp_path_factory.mktemp("ws").resolve()
    (ws / "f").write_bytes(text.encode())
    old = text[cut[0] : cut[0] + cut[1]]
    preview = preview_edit(ws, "f", old, new, replace_all)
    args = {"path": "f", "old": old, "new": new, "replace_all": replace_all}
    done = asyncio.run(Edit().run(args, ToolContext(ws, ws / "spill")))
    assert preview.startswith("✗") is done.is_error
    if not done.is_error:
        assert patched(text, preview) == (ws / "f").read_bytes().decode()


@settings(max_examples=300, deadline=None)
@given(text=TEXT, content=TEXT)
def test_a_write_preview_is_the_write_made(tmp_path_factory: pytest.TempPathFactory, text: str, content: str) -> None:
    """Any file and any content written over it: the preview, applied, gives the content."""
    ws = tmp_path_factory.mktemp("ws").resolve()
    (ws / "f").write_bytes(text.encode())
    preview = preview_write(ws, "f", content)
    assert patched(text, preview) == content if text != content else "changes nothing" in preview


async def test_the_permission_question_carries_the_preview(ws: Path, tmp_path: Path) -> None:
    """Asked about an edit, the executor publishes its preview in the question; the file is unchanged until the
    answer, and a bash question has none."""
    seen: list[StepEvent] = []
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", policy=PermissionPolicy("ask"), can_ask=True)

    def answer(event: StepEvent) -> None:
        seen.append(event)
        if isinstance(event, PermissionRequested):
            assert event.name != "edit" or (ws / "twenty.txt").read_text() == TWENTY
            executor.answer(event.request_id, "allow")

    calls = [
        ToolCall("e1", "edit", {"path": "twenty.txt", "old": "line 5\n", "new": "line five\n"}),
        ToolCall("b1", "bash", {"command": "true"}),
    ]
    await executor.run(calls, answer)
    asked = [event for event in seen if isinstance(event, PermissionRequested)]
    assert [event.preview.splitlines()[2:5] for event in asked] == [["@@ -2,7 +2,7 @@", " line 2", " line 3"], []]
    assert "line five" in (ws / "twenty.txt").read_text()
