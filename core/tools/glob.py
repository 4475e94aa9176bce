"""Provides the ``glob`` tool: files whose workspace path matches a pattern."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.globbing import glob_matches
from chimera.core.tools.output import OutputSink
from chimera.core.tools.paths import display_path, resolve_in_workspace
from chimera.core.tools.walk import walk_files

__all__ = ["Glob"]

MAX_RESULTS = 1000


class Glob:
    name = "glob"
    description = (
        "List files matching a glob pattern such as `**/*.py` or `src/*.ts`, sorted by path. "
        "`path` limits the search to a folder."
    )
    input_schema = schema(
        {
            "pattern": {"type": "string", "description": "Glob pattern; `**` crosses folders."},
            "path": {"type": "string", "description": "Folder to search in (default: the workspace)."},
        },
        ["pattern"],
    )
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        base = resolve_in_workspace(ctx.workspace, args.get("path") or ".")
        return await asyncio.to_thread(_glob, base, args["pattern"], ctx)


def _glob(base: Path, pattern: str, ctx: ToolContext) -> ToolResult:
    if not base.is_dir():
        return ToolResult.error(f"{display_path(ctx.workspace, base)} is not a folder")
    found = sorted(
        display_path(ctx.workspace, p)
        for p in walk_files(base)
        if glob_matches(p.relative_to(base).as_posix(), pattern)
    )
    if not found:
        return ToolResult(f"No files match {pattern!r}.")
    sink = OutputSink(ctx.max_output, ctx.spill_dir / f"{ctx.call_id}.txt")
    for line in found[:MAX_RESULTS]:
        sink.write(line + "\n")
    if len(found) > MAX_RESULTS:
        sink.write(f"[... {len(found) - MAX_RESULTS} more; narrow the pattern ...]\n")
    return ToolResult(sink.render(), data={"count": len(found)})
