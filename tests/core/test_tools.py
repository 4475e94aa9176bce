"""The built-in tools do what the model is told they do, on real files in a real workspace."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import chimera.core.tools.bash as bash_module
import chimera.core.tools.output as output_module
import chimera.core.tools.shell as shell_module
from chimera.core.threads import use_daemon_threads
from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.bash import Bash
from chimera.core.tools.edit import Edit
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep
from chimera.core.tools.read import Read
from chimera.core.tools.think import Think
from chimera.core.tools.write import Write
from tests.processes import Reaper

# --- fixtures and helpers ------------------------------------------------------------


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def spill(tmp_path: Path) -> Path:
    return (tmp_path / "spill").resolve()


def make_ctx(ws: Path, spill: Path, max_output: int = 20_000) -> ToolContext:
    return ToolContext(workspace=ws, spill_dir=spill, max_output=max_output)


@pytest.fixture
def ctx(ws: Path, spill: Path) -> ToolContext:
    return make_ctx(ws, spill)


MARKER = re.compile(r"^\[\.\.\. (\d+) lines truncated; full output: (.+) \.\.\.\]$", re.MULTILINE)


def assert_head_marker_tail(output: str, full: str, cap: int) -> Path:
    """Check the truncated shape against the full text; return the saved file's path."""
    found = MARKER.search(output)
    assert found, f"no truncation marker in {output!r}"
    head, tail = output[: found.start()], output[found.end() + 1 :]
    omitted, saved = int(found.group(1)), Path(found.group(2))
    lines = full.splitlines(keepends=True)
    head_lines, tail_lines = head.splitlines(keepends=True), tail.splitlines(keepends=True)
    # The head is the first lines, the tail the last ones, whole lines only, and the
    # marker counts exactly the lines in between.
    assert head_lines == lines[: len(head_lines)]
    assert tail_lines == lines[len(lines) - len(tail_lines) :]
    assert len(head_lines) + omitted + len(tail_lines) == len(lines)
    assert omitted > 0
    # ~30% of the cap is head, ~70% tail (give or take a cut line or two).
    longest = max(len(line) for line in lines)
    assert cap * 0.3 - 2 * longest < len(head) <= cap * 0.3
    assert cap * 0.7 - 2 * longest < len(tail) <= cap * 0.7
    assert saved.read_text(encoding="utf-8") == full
    return saved


async def run(tool: Any, ctx: ToolContext, **args: Any) -> ToolResult:
    result: ToolResult = await tool.run(args, ctx)
    return result


def count_to(n: int, start: int = 1) -> str:
    """A bash command printing start..n, one per line, with builtins only.

    External coreutils (seq, cat, cut) close stdout before they exit, which trips the
    exit-code race pinned by test_bash_reports_the_real_exit_code_after_output_closes.
    """
    return f"printf '%s\\n' {{{start}..{n}}}"


def names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def numbered(first: int, lines: list[str]) -> str:
    return "".join(f"{n:>6}\t{text}\n" for n, text in enumerate(lines, start=first))


# --- read --------------------------------------------------------------------------


async def test_read_shows_every_line_numbered_from_one(ws: Path, ctx: ToolContext) -> None:
    """Reading a small file shows all its lines, numbered from 1, with no trailing note."""
    (ws / "a.txt").write_text("alpha\nbeta\n\ngamma\n")
    result = await run(Read(), ctx, path="a.txt")
    assert not result.is_error
    assert result.output == "     1\talpha\n     2\tbeta\n     3\t\n     4\tgamma\n"
    assert result.data == {"path": "a.txt", "first": 1, "last": 4}


async def test_read_offset_and_limit_return_that_page_and_say_where_to_continue(ws: Path, ctx: ToolContext) -> None:
    """offset/limit pick a 1-based page; the page ends with the offset to read next."""
    (ws / "a.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await run(Read(), ctx, path="a.txt", offset=3, limit=4)
    assert result.output == (
        numbered(3, ["line 3", "line 4", "line 5", "line 6"])
        + "[... more lines follow: read again with offset=7 ...]\n"
    )
    last_page = await run(Read(), ctx, path="a.txt", offset=7, limit=4)
    assert last_page.output == numbered(7, ["line 7", "line 8", "line 9", "line 10"])


async def test_read_pages_a_big_file_instead_of_cutting_its_middle(ws: Path, spill: Path) -> None:
    """A file bigger than the cap comes in whole-line pages that together hold every line once."""
    lines = [f"line {i:02d}" for i in range(1, 51)]  # each numbered entry is 15 characters
    (ws / "big.txt").write_text("\n".join(lines) + "\n")
    ctx = make_ctx(ws, spill, max_output=200)
    first = await run(Read(), ctx, path="big.txt")
    note = "[... more lines follow: read again with offset=14 ...]\n"
    assert first.output == numbered(1, lines[:13]) + note
    assert "truncated" not in first.output
    seen: list[str] = []
    offset = 1
    while True:
        page = await run(Read(), ctx, path="big.txt", offset=offset)
        body = page.output.split("[... more lines follow", 1)[0]
        seen += [entry.split("\t", 1)[1] for entry in body.splitlines()]
        follow = re.search(r"read again with offset=(\d+)", page.output)
        if follow is None:
            break
        offset = int(follow.group(1))
    assert seen == lines


async def test_read_past_the_end_is_an_error_naming_the_offset(ws: Path, ctx: ToolContext) -> None:
    """An offset beyond the last line is an error, not an empty page."""
    (ws / "a.txt").write_text("one\ntwo\n")
    result = await run(Read(), ctx, path="a.txt", offset=5)
    assert result.is_error
    assert result.output == "Error: a.txt has fewer than 5 lines"


async def test_read_missing_file_folder_empty_and_binary(ws: Path, ctx: ToolContext) -> None:
    """Missing files and folders are errors; empty and binary files are described, not dumped."""
    (ws / "sub").mkdir()
    (ws / "empty.txt").write_text("")
    (ws / "blob.bin").write_bytes(b"\x00\x01\x02\x03")
    missing = await run(Read(), ctx, path="nope.txt")
    assert (missing.is_error, missing.output) == (True, "Error: nope.txt does not exist")
    folder = await run(Read(), ctx, path="sub")
    assert (folder.is_error, folder.output) == (True, "Error: sub is a folder: use glob to list it")
    empty = await run(Read(), ctx, path="empty.txt")
    assert (empty.is_error, empty.output) == (False, "empty.txt is empty.")
    blob = await run(Read(), ctx, path="blob.bin")
    assert (blob.is_error, blob.output) == (False, "blob.bin is a binary file (4 bytes); it is not shown as text.")


async def test_read_describes_a_file_whose_first_nul_comes_late(ws: Path, ctx: ToolContext) -> None:
    """A NUL byte past the first 8 KB still makes the file binary, as grep judges it, not raw bytes on screen."""
    data = b"a line of text that is long enough to fill the first eight kilobytes quickly\n" * 120 + b"\x00 tail\n"
    (ws / "late.bin").write_bytes(data)
    result = await run(Read(), ctx, path="late.bin")
    assert result.output == f"late.bin is a binary file ({len(data):,} bytes); it is not shown as text."
    assert (await run(Grep(), ctx, pattern="tail")).output == "No matches."


async def test_read_cuts_a_very_long_line_and_says_how_long_it_was(ws: Path, ctx: ToolContext) -> None:
    """A 2,500-character line shows its first 2,000 characters and its full length."""
    (ws / "long.txt").write_text("x" * 2500 + "\nshort\n")
    result = await run(Read(), ctx, path="long.txt")
    assert result.output == (f"     1\t{'x' * 2000}… [line cut at 2000 of 2,500 characters]\n     2\tshort\n")


async def test_read_shows_crlf_lines_without_carriage_returns(ws: Path, ctx: ToolContext) -> None:
    """Windows line endings do not leak a stray \\r into the numbered lines."""
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\n")
    result = await run(Read(), ctx, path="dos.txt")
    assert result.output == "     1\tone\n     2\ttwo\n"


# --- write -------------------------------------------------------------------------


async def test_write_creates_parent_folders_and_says_created(ws: Path, ctx: ToolContext) -> None:
    """Writing a new nested file creates its folders and reports 'Created' with the line count, and the folders made."""
    (ws / "a").mkdir()
    result = await run(Write(), ctx, path="a/b/c/d.txt", content="first\nsecond\n")
    assert not result.is_error
    assert result.output == "Created a/b/c/d.txt (2 lines)."
    assert result.data == {"path": "a/b/c/d.txt", "created": True, "folders": ["a/b", "a/b/c"]}
    assert (ws / "a" / "b" / "c" / "d.txt").read_bytes() == b"first\nsecond\n"


async def test_write_over_an_existing_file_says_overwrote(ws: Path, ctx: ToolContext) -> None:
    """Writing an existing file replaces all of it and reports 'Overwrote'."""
    (ws / "f.txt").write_text("old old old\nmore\nand more\n")
    result = await run(Write(), ctx, path="f.txt", content="new\nlast line without newline")
    assert result.output == "Overwrote f.txt (2 lines)."
    assert result.data == {"path": "f.txt", "created": False, "folders": []}
    assert (ws / "f.txt").read_bytes() == b"new\nlast line without newline"


async def test_write_to_a_folder_is_an_error(ws: Path, ctx: ToolContext) -> None:
    """Writing where a folder stands is refused and the folder is left alone."""
    (ws / "dir").mkdir()
    (ws / "dir" / "keep.txt").write_text("keep")
    result = await run(Write(), ctx, path="dir", content="x")
    assert (result.is_error, result.output) == (True, "Error: dir is a folder")
    assert (ws / "dir" / "keep.txt").read_text() == "keep"


# --- edit --------------------------------------------------------------------------


async def test_edit_replaces_the_single_match_and_returns_a_diff(ws: Path, ctx: ToolContext) -> None:
    """A unique `old` is replaced, the result names the line, and data holds the unified diff."""
    (ws / "f.txt").write_text("alpha\nbeta\ngamma\n")
    result = await run(Edit(), ctx, path="f.txt", old="beta", new="BETA")
    assert not result.is_error
    assert result.output == "Edited f.txt: replaced 1 occurrence (line 2)."
    assert (ws / "f.txt").read_text() == "alpha\nBETA\ngamma\n"
    assert result.data["diff"] == ("--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n alpha\n-beta\n+BETA\n gamma\n")


async def test_an_edits_diff_splits_lines_at_newlines_only(ws: Path, ctx: ToolContext) -> None:
    """A carriage return the edit puts inside a line stays on its `+` line; a last line without a newline is
    said so, not glued to the line added after it."""
    (ws / "run.sh").write_text("echo hi\nexit")
    result = await run(Edit(), ctx, path="run.sh", old="exit", new="echo safe\rrm -rf x\nexit\n")
    assert result.data["diff"] == (
        "--- a/run.sh\n+++ b/run.sh\n@@ -1,2 +1,3 @@\n echo hi\n-exit\n\\ No newline at end of file\n"
        "+echo safe\rrm -rf x\n+exit\n"
    )


async def test_edit_with_no_match_is_an_error_and_changes_nothing(ws: Path, ctx: ToolContext) -> None:
    """An `old` that is not in the file is an error and the file is untouched."""
    (ws / "f.txt").write_text("alpha\nbeta\n")
    result = await run(Edit(), ctx, path="f.txt", old="delta", new="x")
    assert result.is_error
    assert result.output == "Error: `old` was not found in f.txt: read the file and copy the text exactly"
    assert (ws / "f.txt").read_text() == "alpha\nbeta\n"


async def test_edit_with_several_matches_names_count_and_lines(ws: Path, ctx: ToolContext) -> None:
    """An ambiguous `old` is an error saying how many matches and on which lines; nothing changes."""
    text = "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n"
    (ws / "f.txt").write_text(text)
    result = await run(Edit(), ctx, path="f.txt", old="x = 1", new="x = 9")
    assert result.is_error
    assert result.output == (
        "Error: `old` matches 3 times in f.txt (lines 1, 3, 5): include more surrounding text, or set replace_all"
    )
    assert (ws / "f.txt").read_text() == text


async def test_edit_replace_all_replaces_every_match(ws: Path, ctx: ToolContext) -> None:
    """With replace_all every occurrence changes and the diff shows each changed line."""
    (ws / "f.txt").write_text("x = 1\ny = 2\nx = 1\n")
    result = await run(Edit(), ctx, path="f.txt", old="x = 1", new="x = 9", replace_all=True)
    assert not result.is_error
    assert result.output.startswith("Edited f.txt: replaced 2 occurrences")
    assert (ws / "f.txt").read_text() == "x = 9\ny = 2\nx = 9\n"
    assert result.data["diff"] == (
        "--- a/f.txt\n+++ b/f.txt\n@@ -1,3 +1,3 @@\n-x = 1\n+x = 9\n y = 2\n-x = 1\n+x = 9\n"
    )


async def test_edit_refuses_missing_files_and_empty_or_no_op_edits(ws: Path, ctx: ToolContext) -> None:
    """Editing a missing file, an empty `old`, or `old` == `new` are errors that leave files alone."""
    (ws / "f.txt").write_text("abc\n")
    missing = await run(Edit(), ctx, path="nope.txt", old="a", new="b")
    assert missing.output == "Error: nope.txt does not exist: use write to create it"
    empty = await run(Edit(), ctx, path="f.txt", old="", new="b")
    assert empty.output == "Error: `old` is empty: give the exact text to replace"
    same = await run(Edit(), ctx, path="f.txt", old="abc", new="abc")
    assert same.output == "Error: `old` and `new` are the same: nothing would change"
    assert all(r.is_error for r in (missing, empty, same))
    assert not (ws / "nope.txt").exists()
    assert (ws / "f.txt").read_text() == "abc\n"


async def test_edit_changes_only_the_matched_text_in_a_crlf_file(ws: Path, ctx: ToolContext) -> None:
    """Editing one word of a Windows-style file keeps every other byte, CRLF endings included."""
    (ws / "dos.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await run(Edit(), ctx, path="dos.txt", old="two", new="TWO")
    assert not result.is_error
    assert (ws / "dos.txt").read_bytes() == b"one\r\nTWO\r\nthree\r\n"


# --- glob --------------------------------------------------------------------------


def _tree(ws: Path) -> None:
    for rel in (
        "a.py",
        "b.txt",
        "src/c.py",
        "src/deep/d.py",
        "src/e.txt",
        ".git/hooks.py",
        "node_modules/m.py",
        "src/__pycache__/c.py",
    ):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"content of {rel}\n")


async def test_glob_without_slash_matches_names_in_every_folder_sorted(ws: Path, ctx: ToolContext) -> None:
    """`*.py` lists every Python file at any depth, sorted, skipping VCS and cache folders."""
    _tree(ws)
    result = await run(Glob(), ctx, pattern="*.py")
    assert result.output == "a.py\nsrc/c.py\nsrc/deep/d.py\n"
    assert result.data == {"count": 3}


async def test_glob_with_a_folder_pattern_stays_at_that_depth(ws: Path, ctx: ToolContext) -> None:
    """`src/*.py` matches only directly in src, `src/**/*.py` at any depth below it."""
    _tree(ws)
    shallow = await run(Glob(), ctx, pattern="src/*.py")
    assert shallow.output == "src/c.py\n"
    deep = await run(Glob(), ctx, pattern="src/**/*.py")
    assert deep.output == "src/c.py\nsrc/deep/d.py\n"


async def test_glob_path_limits_the_search_and_paths_stay_workspace_relative(ws: Path, ctx: ToolContext) -> None:
    """With `path`, the pattern applies inside that folder and results are shown from the workspace root."""
    _tree(ws)
    result = await run(Glob(), ctx, pattern="*.py", path="src")
    assert result.output == "src/c.py\nsrc/deep/d.py\n"
    braces = await run(Glob(), ctx, pattern="*.{txt,md}", path="src")
    assert braces.output == "src/e.txt\n"


async def test_glob_lists_results_sorted_by_path(ws: Path, ctx: ToolContext) -> None:
    """Results come sorted by path, as the tool description promises: src/deep/d.py before src/e.txt."""
    _tree(ws)
    result = await run(Glob(), ctx, pattern="*", path="src")
    assert result.output == "src/c.py\nsrc/deep/d.py\nsrc/e.txt\n"


async def test_glob_with_no_match_says_so(ws: Path, ctx: ToolContext) -> None:
    """A pattern matching nothing gives a plain sentence, not an empty string."""
    _tree(ws)
    result = await run(Glob(), ctx, pattern="*.rs")
    assert (result.is_error, result.output) == (False, "No files match '*.rs'.")
    not_folder = await run(Glob(), ctx, pattern="*", path="a.py")
    assert (not_folder.is_error, not_folder.output) == (True, "Error: a.py is not a folder")


async def test_glob_over_the_cap_keeps_head_and_tail_and_saves_the_rest(ws: Path, spill: Path) -> None:
    """Thousands of matches show a head, a marker and a tail; the saved file lists every one of them."""
    names = [f"f{i:04d}.txt" for i in range(1500)]
    for name in names:
        (ws / name).write_text("")
    result = await run(Glob(), make_ctx(ws, spill, max_output=500), pattern="*.txt")
    saved = assert_head_marker_tail(result.output, "".join(n + "\n" for n in names), 500)
    assert saved == spill / "call.txt"


# --- grep --------------------------------------------------------------------------


def _sources(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "a.py").write_text("import os\nTODO: first\n")
    (ws / "src" / "b.py").write_text("x = 1\n# todo later\nTODO: second   \n")
    (ws / "src" / "notes.md").write_text("TODO: in markdown\n")
    (ws / "src" / "blob.bin").write_bytes(b"TODO\x00binary")
    (ws / ".git").mkdir()
    (ws / ".git" / "TODO").write_text("TODO: in git\n")


async def test_grep_prints_path_line_text_for_every_match(ws: Path, ctx: ToolContext) -> None:
    """Matches come as path:line:text, files in sorted order, binaries and .git skipped."""
    _sources(ws)
    result = await run(Grep(), ctx, pattern=r"TODO:")
    assert result.output == "a.py:2:TODO: first\nsrc/b.py:3:TODO: second\nsrc/notes.md:1:TODO: in markdown\n"
    assert result.data == {"matches": 3}


async def test_grep_ignore_case_finds_every_spelling(ws: Path, ctx: ToolContext) -> None:
    """ignore_case also finds `todo` in lower case."""
    _sources(ws)
    result = await run(Grep(), ctx, pattern="todo", path="src", ignore_case=True)
    assert result.output == ("src/b.py:2:# todo later\nsrc/b.py:3:TODO: second\nsrc/notes.md:1:TODO: in markdown\n")
    exact = await run(Grep(), ctx, pattern="todo", path="src")
    assert exact.output == "src/b.py:2:# todo later\n"


async def test_grep_glob_filters_files(ws: Path, ctx: ToolContext) -> None:
    """`glob` keeps only the files whose path matches it."""
    _sources(ws)
    result = await run(Grep(), ctx, pattern="TODO", glob="*.md")
    assert result.output == "src/notes.md:1:TODO: in markdown\n"


async def test_grep_path_can_be_a_single_file(ws: Path, ctx: ToolContext) -> None:
    """`path` naming one file searches only that file."""
    _sources(ws)
    result = await run(Grep(), ctx, pattern="TODO", path="src/b.py")
    assert result.output == "src/b.py:3:TODO: second\n"


async def test_grep_single_file_with_a_matching_glob_still_searches_it(ws: Path, ctx: ToolContext) -> None:
    """`path` naming a .py file plus glob `*.py` searches that file rather than reporting no matches."""
    _sources(ws)
    result = await run(Grep(), ctx, pattern="TODO", path="src/b.py", glob="*.py")
    assert result.output == "src/b.py:3:TODO: second\n"


async def test_grep_bad_regex_and_no_matches(ws: Path, ctx: ToolContext) -> None:
    """An invalid regular expression is an error naming it; no hits is a plain 'No matches.'."""
    _sources(ws)
    bad = await run(Grep(), ctx, pattern="(unclosed")
    assert bad.is_error
    assert bad.output == (
        "Error: the pattern is not a valid regular expression: missing ), unterminated subpattern at position 0"
    )
    none = await run(Grep(), ctx, pattern="nothing-like-this")
    assert (none.is_error, none.output) == (False, "No matches.")
    missing = await run(Grep(), ctx, pattern="x", path="gone")
    assert (missing.is_error, missing.output) == (True, "Error: gone does not exist")


async def test_grep_over_the_cap_keeps_head_and_tail_and_saves_the_rest(ws: Path, spill: Path) -> None:
    """Many hits show a head, a marker and a tail; the saved file holds every hit line."""
    (ws / "big.txt").write_text("".join(f"match {i:04d}\n" for i in range(1, 401)))
    result = await run(Grep(), make_ctx(ws, spill, max_output=600), pattern="match")
    full = "".join(f"big.txt:{i}:match {i:04d}\n" for i in range(1, 401))
    assert_head_marker_tail(result.output, full, 600)
    saved = Path(result.data["full_output"])  # the workbench opens it whole with `o`
    assert result.data == {"matches": 400, "cut": True, "lines": 400, "full_output": str(saved)}
    assert saved.read_text() == full


# --- bash --------------------------------------------------------------------------


async def test_an_endless_stream_fills_the_saved_output_only_up_to_its_cap(
    ws: Path, spill: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`yes` until its timeout: the saved file stops at the cap, the model sees the head, a note, and the last lines."""
    monkeypatch.setattr(output_module, "SAVE_CAP", 1_000_000)
    result = await run(Bash(), make_ctx(ws, spill), command="echo first; yes; echo never", timeout=2)
    saved = Path(result.data["full_output"])
    assert 1_000_000 <= saved.stat().st_size < 1_001_000
    head, _, tail = result.output.partition("\n[... ")
    assert head.startswith("first\ny\ny\n")
    marker = tail.split("\n")[0]
    assert re.fullmatch(r"\d+ lines truncated; the first 1 MB of the output are in .+/call\.txt \.\.\.\]", marker)
    assert tail.split("\n")[1:4] == ["y", "y", "y"]
    assert result.output.endswith("[killed after 2s timeout; raise `timeout` (at most 600) if it needs longer]")
    assert saved.read_bytes().startswith(b"first\ny\n")


async def test_bash_merges_stdout_and_stderr_in_the_order_written(ctx: ToolContext) -> None:
    """Interleaved stdout and stderr lines come back in the order the command wrote them."""
    result = await run(Bash(), ctx, command="echo out1; echo err1 >&2; echo out2; echo err2 >&2; echo out3")
    assert not result.is_error
    assert result.output == "out1\nerr1\nout2\nerr2\nout3\n"
    assert result.data["exit_code"] == 0


def test_a_process_that_ran_commands_exits_cleanly(tmp_path: Path) -> None:
    """After bash calls, the process exits without leaving its watcher running or warnings on stderr."""
    script = (
        "import asyncio, pathlib, sys\n"
        "from chimera.core.tools.base import ToolContext\n"
        "from chimera.core.tools.bash import Bash\n"
        "ws = pathlib.Path(sys.argv[1])\n"
        "ctx = ToolContext(workspace=ws, spill_dir=ws / 'spill', max_output=1000)\n"
        "print(asyncio.run(Bash().run({'command': 'echo ran'}, ctx)).output, end='')\n"
    )
    proc = subprocess.run(
        [sys.executable, "-X", "dev", "-W", "error", "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "ran\n", "")


async def test_bash_gives_a_command_120_seconds_unless_told_otherwise(ctx: ToolContext) -> None:
    """With no `timeout` a command may run 120 s (as the model is told); a given timeout is the one used."""
    assert "default 120, at most 600" in Bash.description
    assert (await run(Bash(), ctx, command="true")).data["timeout"] == 120
    assert (await run(Bash(), ctx, command="true", timeout=5)).data["timeout"] == 5


async def test_bash_reports_a_nonzero_exit_code(ctx: ToolContext) -> None:
    """A failing command is an error whose text ends with its exit code."""
    result = await run(Bash(), ctx, command="echo partial; exit 3")
    assert result.is_error
    assert result.output == "partial\n[exit code 3]"
    assert result.data["exit_code"] == 3


async def test_bash_reports_the_real_exit_code_after_output_closes(ctx: ToolContext) -> None:
    """A command that closes stdout/stderr and then finishes is reported with its own exit code, not -9."""
    result = await run(Bash(), ctx, command="echo done; exec >&- 2>&-; sleep 1; exit 4")
    assert result.output == "done\n[exit code 4]"
    assert result.data["exit_code"] == 4


async def test_bash_runs_in_the_workspace_with_empty_stdin(ws: Path, ctx: ToolContext) -> None:
    """The command starts in the workspace; a command reading stdin gets EOF instead of hanging."""
    result = await run(Bash(), ctx, command="pwd; cat; echo done")
    assert result.output == f"{ws}\ndone\n"
    silent = await run(Bash(), ctx, command="true")
    assert (silent.is_error, silent.output) == (False, "(no output)")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_bash_runs_in_its_own_process_group(ctx: ToolContext) -> None:
    """The shell leads a new process group, separate from the workbench's."""
    result = await run(Bash(), ctx, command="echo $$; read -r _ _ _ _ pgrp _ < /proc/$$/stat; echo $pgrp")
    shell_pid, group = (int(x) for x in result.output.split())
    assert group == shell_pid
    assert group != os.getpgrp()


async def test_bash_does_not_see_the_api_key(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """ANTHROPIC_API_KEY in the workbench's environment is not visible to commands; other variables are."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret-value")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "auth-secret-value")
    monkeypatch.setenv("CHIMERA_TEST_VISIBLE", "visible")
    result = await run(
        Bash(),
        ctx,
        command="echo ${ANTHROPIC_API_KEY:-none}; echo ${ANTHROPIC_AUTH_TOKEN:-none}; echo $CHIMERA_TEST_VISIBLE",
    )
    assert result.output == "none\nnone\nvisible\n"


async def test_bash_returns_promptly_and_kills_a_background_child(ctx: ToolContext, reaper: Reaper) -> None:
    """`sleep 300 &` does not hold the call open, and the sleep is gone once the call returns."""
    result = await run(Bash(), ctx, command="sleep 300 & echo $!")
    assert not result.is_error
    child = int(result.output)
    assert result.data["seconds"] < 5
    reaper.assert_killed(child)


async def test_bash_without_a_supervisor_still_kills_its_group(
    ctx: ToolContext, reaper: Reaper, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where no supervisor can run (not Linux), output, exit code and the group kill work as before."""
    monkeypatch.setattr(shell_module, "can_supervise", lambda: False)
    result = await run(Bash(), ctx, command="sleep 300 & echo $!; exit 3")
    assert (result.data["exit_code"], result.data["seconds"] < 5) == (3, True)
    child, note = result.output.split("\n")
    assert note == "[exit code 3]"
    reaper.assert_killed(int(child))


async def test_bash_timeout_kills_the_whole_group(ctx: ToolContext, reaper: Reaper) -> None:
    """On timeout the command and its background children are killed, and the result says so."""
    result = await run(Bash(), ctx, command="sleep 300 & echo $!; sleep 300", timeout=1)
    assert result.is_error
    child_line, note = result.output.split("\n")
    assert note == "[killed after 1s timeout; raise `timeout` (at most 600) if it needs longer]"
    assert result.data["exit_code"] == -signal.SIGKILL
    reaper.assert_killed(int(child_line))


async def test_a_call_killed_at_the_longest_timeout_is_not_told_to_raise_it(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At the most a call may run, the advice is to split the work, not to raise a `timeout` that cannot go higher."""
    monkeypatch.setattr(bash_module, "MAX_TIMEOUT", 1)
    result = await run(Bash(), ctx, command="echo started; sleep 300", timeout=1)
    assert result.output == (
        "started\n[killed after 1s timeout, the longest a call may run: split the work into shorter commands]"
    )


async def test_cancelling_a_bash_call_kills_its_processes(ws: Path, ctx: ToolContext, reaper: Reaper) -> None:
    """Cancelling the task running bash kills the shell and its background child."""
    fifo = ws / "started.fifo"
    os.mkfifo(fifo)
    # Holding both ends open means neither side blocks and we see the write as an event.
    fd = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    loop = asyncio.get_running_loop()
    started: asyncio.Future[bytes] = loop.create_future()
    loop.add_reader(fd, lambda: started.done() or started.set_result(os.read(fd, 100)))
    task = asyncio.create_task(run(Bash(), ctx, command=f"sleep 300 & echo $! $$ > {fifo}; wait"))
    try:
        child, shell = (int(x) for x in (await asyncio.wait_for(started, 10)).split())
    finally:
        loop.remove_reader(fd)
        os.close(fd)
        task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    with pytest.raises(ProcessLookupError):
        os.kill(shell, 0)  # the shell is our own child: killed and reaped by the tool
    reaper.assert_killed(child)


async def test_bash_over_the_cap_keeps_head_and_tail_and_saves_everything(ws: Path, spill: Path) -> None:
    """3,000 lines show ~30% head, a marker counting the cut lines, ~70% tail; the saved file is whole."""
    result = await run(Bash(), make_ctx(ws, spill, max_output=1000), command=count_to(3000))
    assert not result.is_error
    full = "".join(f"{i}\n" for i in range(1, 3001))
    saved = assert_head_marker_tail(result.output, full, 1000)
    assert saved == spill / "call.txt"
    assert result.data["full_output"] == str(saved)
    assert result.output.startswith("1\n2\n3\n")
    assert result.output.endswith("2999\n3000\n")


async def test_bash_keeps_multibyte_characters_split_across_reads(ws: Path, spill: Path) -> None:
    """Non-ASCII output larger than one pipe read arrives without replacement characters."""
    # One 200,001-byte write: the pipe hands it over in reads that split an "é" in two.
    script = "import sys; sys.stdout.buffer.write(b'a' + 'é'.encode() * 100000)"
    ctx = make_ctx(ws, spill, max_output=250_000)
    result = await run(Bash(), ctx, command=f"{shlex.quote(sys.executable)} -c {shlex.quote(script)}; true")
    assert result.output == "a" + "é" * 100000


async def test_bash_output_under_the_cap_has_no_marker_and_no_saved_file(ws: Path, spill: Path) -> None:
    """Output that fits is returned whole and nothing is saved."""
    result = await run(Bash(), make_ctx(ws, spill, max_output=1000), command=count_to(100))
    assert result.output == "".join(f"{i}\n" for i in range(1, 101))
    assert "full_output" not in result.data
    assert not (spill / "call.txt").exists()


# --- think -------------------------------------------------------------------------


async def test_think_records_the_thought_and_touches_nothing(ws: Path, ctx: ToolContext) -> None:
    """`think` answers with a fixed acknowledgement and leaves the workspace as it was."""
    result = await run(Think(), ctx, thought="plan: read, then edit")
    assert (result.is_error, result.output) == (False, "Thought recorded.")
    assert names(ws) == []


async def test_edit_refuses_a_file_that_is_not_utf8_and_leaves_it_untouched(ws: Path, ctx: ToolContext) -> None:
    """Editing a Latin-1 file is refused with a way forward; not one byte of it changes."""
    original = "café = 1\nname = 'x'\n".encode("latin-1")
    (ws / "legacy.py").write_bytes(original)
    result = await Edit().run({"path": "legacy.py", "old": "'x'", "new": "'y'"}, ctx)
    assert result.is_error
    assert "not UTF-8" in result.output
    assert "offset 3" in result.output
    assert (ws / "legacy.py").read_bytes() == original


async def test_write_and_edit_keep_the_file_mode(ws: Path, ctx: ToolContext) -> None:
    """An executable script stays executable after write and edit (the atomic replace keeps its mode)."""
    script = ws / "run.sh"
    script.write_text("echo one\n")
    script.chmod(0o750)
    await Edit().run({"path": "run.sh", "old": "one", "new": "two"}, ctx)
    assert script.stat().st_mode & 0o777 == 0o750
    await Write().run({"path": "run.sh", "content": "echo three\n"}, ctx)
    assert script.stat().st_mode & 0o777 == 0o750
    assert script.read_text() == "echo three\n"
    assert [p.name for p in ws.iterdir()] == ["run.sh"]  # no temporary file left behind


async def test_read_shows_invalid_utf8_as_replacement_characters(ws: Path, ctx: ToolContext) -> None:
    """Bytes that are not UTF-8 read as U+FFFD, and the good text around them is intact."""
    (ws / "mixed.txt").write_bytes(b"caf\xe9 ok\n\xff\xfe tail\n")
    result = await Read().run({"path": "mixed.txt"}, ctx)
    assert result.output == "     1\tcaf\ufffd ok\n     2\t\ufffd\ufffd tail\n"


async def test_a_one_megabyte_single_line_stays_bounded_in_every_tool(ws: Path, ctx: ToolContext) -> None:
    """A 1 MB line without a newline: read cuts it, grep and bash keep head and tail within the cap."""
    line = "a" * 500_000 + "MIDDLE" + "z" * 500_000
    (ws / "one-line.txt").write_text(line)
    read = await Read().run({"path": "one-line.txt"}, ctx)
    assert read.output.startswith("     1\taaaa")
    assert "line cut at 2000 of 1,000,006 characters" in read.output
    grep = await Grep().run({"pattern": "MIDDLE"}, ctx)
    assert len(grep.output) <= 20_200
    assert grep.output.startswith("one-line.txt:1:aaaa")
    assert "full output: " in grep.output
    bash = await Bash().run({"command": "cat one-line.txt"}, ctx)
    assert len(bash.output) <= 20_200
    assert bash.output.startswith("aaaa")
    assert bash.output.rstrip().endswith("zzzz")
    assert Path(bash.data["full_output"]).read_text() == line


# --- special files -------------------------------------------------------------------


@pytest.fixture
def pipe(ws: Path) -> Iterator[Path]:
    """A FIFO in the workspace that nobody writes to; afterwards any reader still waiting on it is let go."""
    path = ws / "p.fifo"
    os.mkfifo(path)
    yield path
    with contextlib.suppress(OSError):
        os.close(os.open(path, os.O_WRONLY | os.O_NONBLOCK))  # succeeds only if a reader is blocked in open


async def within(seconds: float, tool: Any, ctx: ToolContext, **args: Any) -> ToolResult:
    """The tool's result, or a failure if it has not come within ``seconds`` (it blocked).

    Its blocking work runs on daemon threads, as in a run: one stuck for ever cannot hang the test session.
    """
    use_daemon_threads(asyncio.get_running_loop())
    try:
        return await asyncio.wait_for(run(tool, ctx, **args), seconds)
    except TimeoutError:
        pytest.fail(f"{tool.name} blocked on {args}")


async def test_read_edit_write_and_grep_refuse_a_fifo_at_once(pipe: Path, ctx: ToolContext) -> None:
    """A FIFO nobody writes to: each file tool answers at once that it is not a regular file, and leaves it a FIFO."""
    refusal = "Error: p.fifo is a named pipe (FIFO), not a regular file"
    assert (await within(5, Read(), ctx, path="p.fifo")).output == refusal
    assert (await within(5, Edit(), ctx, path="p.fifo", old="a", new="b")).output == refusal
    assert (await within(5, Write(), ctx, path="p.fifo", content="x")).output == refusal
    assert (await within(5, Grep(), ctx, pattern="x", path="p.fifo")).output == refusal
    assert stat.S_ISFIFO(pipe.lstat().st_mode)


async def test_read_and_write_refuse_a_socket(ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Unix socket in the workspace is named as one; write does not replace it with a file."""
    monkeypatch.chdir(ws)  # a short relative address: socket paths are limited to about 100 bytes
    with socket.socket(socket.AF_UNIX) as server:
        server.bind("s.sock")
        refusal = "Error: s.sock is a socket, not a regular file"
        assert (await within(5, Read(), ctx, path="s.sock")).output == refusal
        assert (await within(5, Write(), ctx, path="s.sock", content="x")).output == refusal
        assert stat.S_ISSOCK((ws / "s.sock").lstat().st_mode)


async def test_glob_and_grep_walk_past_a_fifo_named_like_a_rule_file(
    ws: Path, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A FIFO as `.gitignore` (or in a file's place) never stalls the Python walk; the real files are still found."""
    monkeypatch.setenv("CHIMERA_RG", "off")  # ripgrep itself waits on such a .gitignore: a known limit
    (ws / ".git").mkdir()
    (ws / "sub").mkdir()
    (ws / "sub" / "a.txt").write_text("needle\n")
    os.mkfifo(ws / ".gitignore")
    os.mkfifo(ws / "sub" / ".gitignore")
    os.mkfifo(ws / "sub" / "b.txt")
    try:
        assert (await within(5, Glob(), ctx, pattern="**/*.txt")).output == "sub/a.txt\n"
        assert (await within(5, Grep(), ctx, pattern="needle")).output == "sub/a.txt:1:needle\n"
    finally:
        for fifo in (ws / ".gitignore", ws / "sub" / ".gitignore"):
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
