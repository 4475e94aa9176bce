"""Provides the ``grep`` tool: lines matching a regular expression, as path:line:text, via ripgrep or Python.

Both paths search the files ``walk_files`` yields, decode them alike (see
``walk.py``), skip any file whose text holds a NUL, split lines at ``\\n`` only
(a ``\\r`` stays part of its line), match the regular expression against each
line without its ``\\n``, and print the line with trailing whitespace removed.
"""

from __future__ import annotations

import asyncio
import os
import re
import warnings
from collections.abc import Callable
from contextlib import aclosing
from functools import partial
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.files import NotRegularFile, special_kind
from chimera.core.tools.glob import raw_prefix, shown_prefix
from chimera.core.tools.globbing import glob_matches, glob_regex, names_hidden
from chimera.core.tools.output import OutputSink
from chimera.core.tools.paths import display_path, resolve_in_workspace, shown_name
from chimera.core.tools.ripgrep import RipgrepFailed, find_rg, rg_can_run, rg_grep
from chimera.core.tools.walk import text_blocks, walk_files

__all__ = ["Grep", "python_grep"]

# Where a whole-block search could miss a line's match, each line is searched alone.
_LINE_BOUND = re.compile(r"\\[AZ]|\(\?<?[=!]")


class Grep:
    name = "grep"
    description = (
        "Search file contents with a regular expression (Python syntax). Prints `path:line:text`, "
        "files sorted by path. `glob` filters files (e.g. `*.py`); `ignore_case` makes the search "
        "case-insensitive. Skips binary files (any NUL byte), what .gitignore ignores, node_modules "
        "and __pycache__, symlinks, and hidden files and folders unless `glob` names one (`.github/**`)."
    )
    input_schema = schema(
        {
            "pattern": {"type": "string", "description": "Regular expression."},
            "path": {"type": "string", "description": "File or folder to search (default: the workspace)."},
            "glob": {"type": "string", "description": "Only files whose path matches this glob."},
            "ignore_case": {"type": "boolean", "description": "Case-insensitive search."},
        },
        ["pattern"],
    )
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        base = resolve_in_workspace(ctx.workspace, args.get("path") or ".")
        pattern: str = args["pattern"]
        ignore_case = bool(args.get("ignore_case"))
        glob: str | None = args.get("glob") or None
        try:
            _compile(pattern, re.IGNORECASE if ignore_case else 0)
        except re.error as err:
            return ToolResult.error(f"the pattern is not a valid regular expression: {err}")
        if not base.exists():
            return ToolResult.error(f"{display_path(ctx.workspace, base)} does not exist")
        if not base.is_dir() and (kind := special_kind(base.stat().st_mode)) is not None:
            return ToolResult.error(NotRegularFile(kind).describe(display_path(ctx.workspace, base)))
        try:
            if glob is not None:
                glob_regex(glob)
        except ValueError as err:
            return ToolResult.error(f"the glob pattern is not valid: {err}")
        if base.is_file() and glob is not None and not glob_matches(base.name, glob):
            return ToolResult("No matches.")
        rg = find_rg() if rg_can_run(pattern) else None
        if rg is not None:
            hits = _Hits(ctx, base)

            def keep(relative: str) -> bool:
                return glob is None or glob_matches(relative, glob)

            try:
                found = rg_grep(
                    rg,
                    base,
                    pattern,
                    single=base.is_file(),
                    ignore_case=ignore_case,
                    glob=glob,
                    hidden=names_hidden(glob),
                    keep=keep,
                )
                async with aclosing(found) as lines:
                    async for relative, number, text in lines:
                        hits.add(relative, number, text)
                return hits.result()
            except RipgrepFailed:
                hits.discard()
        return await asyncio.to_thread(python_grep, base, pattern, ignore_case, glob, ctx)


class _Hits:
    """Matching lines as `path:line:text`, written to a sink as they come."""

    def __init__(self, ctx: ToolContext, base: Path) -> None:
        self.sink = OutputSink(ctx.max_output, ctx.spill_dir / f"{ctx.call_id}.txt", redactor=ctx.redactor)
        single = base.is_file()
        self.single = display_path(ctx.workspace, base) if single else None
        self.single_raw = base.relative_to(ctx.workspace).as_posix() if single else None
        self.prefix = shown_prefix(ctx.workspace, base)
        self.raw_prefix = raw_prefix(ctx.workspace, base)
        self.withheld = ctx.withheld
        self.count = 0

    def add(self, relative: str, number: object, text: str) -> None:
        path = self.single_raw if self.single_raw is not None else self.raw_prefix + relative
        if self.withheld is not None and self.withheld(path):
            return
        shown = self.single if self.single is not None else self.prefix + shown_name(relative)
        self.sink.write(f"{shown}:{number}:{text.rstrip()}\n")
        self.count += 1

    def discard(self) -> None:
        self.sink.close()
        if self.sink.truncated:
            self.sink.spill_path.unlink(missing_ok=True)

    def result(self) -> ToolResult:
        if not self.count:
            self.sink.close()
            return ToolResult("No matches.")
        return ToolResult(self.sink.render(), data={"matches": self.count})


def python_grep(base: Path, pattern: str, ignore_case: bool, glob: str | None, ctx: ToolContext) -> ToolResult:
    """The pure-Python grep (blocking; the reference ripgrep must agree with)."""
    flags = re.IGNORECASE if ignore_case else 0
    regex = _compile(pattern, flags)
    wide = None if _LINE_BOUND.search(pattern) else _compile(pattern, flags | re.MULTILINE)
    hits = _Hits(ctx, base)
    if base.is_file():
        search_file(str(base), regex, wide, partial(hits.add, ""))
        return hits.result()
    for relative in walk_files(base, hidden=names_hidden(glob)):
        if glob is None or glob_matches(relative, glob):
            path = os.path.join(base, relative)
            search_file(path, regex, wide, partial(hits.add, relative))
    return hits.result()


def _compile(pattern: str, flags: int) -> re.Pattern[str]:
    """Compile without Python's FutureWarning about `[[` and `--` in classes: they keep today's meaning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return re.compile(pattern, flags)


def search_file(
    path: str, regex: re.Pattern[str], wide: re.Pattern[str] | None, emit: Callable[[int, str], None]
) -> None:
    """Call ``emit(number, line)`` for each matching line, unless the file is binary.

    ``wide`` is ``regex`` compiled with MULTILINE: it finds candidate lines in
    a whole block at C speed; ``regex`` then decides on the line alone.
    """
    blocks = text_blocks(path)
    if blocks is None:
        return
    number = 1
    for text in blocks:
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
