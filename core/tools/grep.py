"""Provides the ``grep`` tool: lines matching a regular expression, as path:line:text."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.globbing import glob_matches
from chimera.core.tools.output import OutputSink
from chimera.core.tools.paths import display_path, resolve_in_workspace
from chimera.core.tools.walk import is_binary, walk_files

__all__ = ["Grep"]


class Grep:
    name = "grep"
    description = (
        "Search file contents with a regular expression (Python syntax). Prints `path:line:text`. "
        "`glob` filters files (e.g. `*.py`); `ignore_case` makes the search case-insensitive."
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
        try:
            regex = re.compile(args["pattern"], re.IGNORECASE if args.get("ignore_case") else 0)
        except re.error as err:
            return ToolResult.error(f"the pattern is not a valid regular expression: {err}")
        return await asyncio.to_thread(_grep, base, regex, args.get("glob"), ctx)


def _grep(base: Path, regex: re.Pattern[str], pattern: str | None, ctx: ToolContext) -> ToolResult:
    if not base.exists():
        return ToolResult.error(f"{display_path(ctx.workspace, base)} does not exist")
    files = [base] if base.is_file() else walk_files(base)
    sink = OutputSink(ctx.max_output, ctx.spill_dir / f"{ctx.call_id}.txt")
    hits = 0
    for path in files:
        shown = display_path(ctx.workspace, path)
        if path.is_symlink() and not path.resolve().is_relative_to(ctx.workspace):
            continue  # a link out of the workspace is never read
        relative = path.relative_to(base).as_posix() if base.is_dir() else path.name
        if pattern and not glob_matches(relative, pattern):
            continue
        if is_binary(path):
            continue
        with path.open("r", encoding="utf-8", errors="replace") as fh:
            for number, line in enumerate(fh, start=1):
                if regex.search(line):
                    hits += 1
                    sink.write(f"{shown}:{number}:{line.rstrip()}\n")
    if not hits:
        sink.close()
        return ToolResult("No matches.")
    return ToolResult(sink.render(), data={"matches": hits})
