"""Provides the ``grep`` tool: lines matching a regular expression, as path:line:text, via ripgrep or Python.

Both paths search the files ``walk_files`` yields, decode them alike (see
``walk.py``), skip any file whose text holds a NUL, split lines at ``\\n`` only
(a ``\\r`` stays part of its line), match the regular expression against each
line without its ``\\n``, and print the line with trailing whitespace removed.
"""

from __future__ import annotations

import os
import re
from contextlib import aclosing
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.files import NotRegularFile, special_kind
from chimera.core.tools.glob import raw_prefix, shown_prefix
from chimera.core.tools.globbing import glob_matches, glob_regex, names_hidden
from chimera.core.tools.output import OutputSink
from chimera.core.tools.paths import display_path, resolve_in_workspace, shown_name
from chimera.core.tools.pysearch import search
from chimera.core.tools.ripgrep import RipgrepFailed, find_rg, rg_can_run, rg_grep
from chimera.core.tools.textsearch import compile_pattern

__all__ = ["Grep", "python_grep"]


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
            compile_pattern(pattern, re.IGNORECASE if ignore_case else 0)
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
        return await python_grep(base, pattern, ignore_case, glob, ctx)


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
        return ToolResult(self.sink.render(), data={"matches": self.count, **self.sink.cut_data()})

    def failed(self, why: str) -> ToolResult:
        """The lines found so far, then the error that ended the search."""
        found = self.sink.render() if self.count else ""
        return ToolResult(f"{found}Error: {why}", is_error=True, data={"matches": self.count, **self.sink.cut_data()})


async def python_grep(base: Path, pattern: str, ignore_case: bool, glob: str | None, ctx: ToolContext) -> ToolResult:
    """The pure-Python grep (the reference ripgrep must agree with), in a worker process Chimera can end."""
    hits = _Hits(ctx, base)
    request = {
        "mode": "grep",
        "base": os.fspath(base),
        "single": hits.single is not None,
        "pattern": pattern,
        "ignore_case": ignore_case,
        "glob": glob,
        "hidden": names_hidden(glob),
    }
    failed = await search(request, hits.add)
    return hits.result() if failed is None else hits.failed(failed)
