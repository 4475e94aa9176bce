"""Provides the ``glob`` tool: files whose workspace path matches a pattern, via ripgrep or the Python walk."""

from __future__ import annotations

import os
from contextlib import aclosing
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.globbing import glob_matches, glob_regex, names_hidden
from chimera.core.tools.output import OutputSink
from chimera.core.tools.paths import display_path, resolve_in_workspace, shown_name
from chimera.core.tools.pysearch import search
from chimera.core.tools.ripgrep import RipgrepFailed, find_rg, rg_files

__all__ = ["Glob", "python_glob", "raw_prefix", "shown_prefix"]


class Glob:
    name = "glob"
    description = (
        "List files matching a glob pattern such as `**/*.py` or `src/*.ts`, sorted by path "
        "(a folder's files right after its name). `path` limits the search to a folder. "
        "Skips what .gitignore ignores, node_modules and __pycache__, symlinks, and hidden files and "
        "folders (names starting with `.`) unless the pattern names one, as in `.github/**`."
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
        pattern: str = args["pattern"]
        if not base.is_dir():
            return ToolResult.error(f"{display_path(ctx.workspace, base)} is not a folder")
        try:
            glob_regex(pattern)
        except ValueError as err:
            return ToolResult.error(f"the glob pattern is not valid: {err}")
        rg = find_rg()
        if rg is not None:
            listing = _Listing(pattern, base, ctx)
            try:
                async with aclosing(rg_files(rg, base, hidden=names_hidden(pattern), glob=pattern)) as files:
                    async for relative in files:
                        listing.add(relative)
                return listing.result()
            except RipgrepFailed:
                listing.discard()
        return await python_glob(base, pattern, ctx)


def shown_prefix(workspace: Path, base: Path) -> str:
    """What goes before a path relative to ``base`` to show it relative to the workspace."""
    shown = display_path(workspace, base)
    return "" if shown == "." else shown + "/"


def raw_prefix(workspace: Path, base: Path) -> str:
    """What goes before a path relative to ``base`` to make it relative to the workspace, as Python names it."""
    relative = base.relative_to(workspace).as_posix()
    return "" if relative == "." else relative + "/"


class _Listing:
    """The matching paths; past the output cap the sink keeps head and tail and saves every path."""

    def __init__(self, pattern: str, base: Path, ctx: ToolContext) -> None:
        self.pattern = pattern
        self.prefix = shown_prefix(ctx.workspace, base)
        self.raw_prefix = raw_prefix(ctx.workspace, base)
        self.sink = OutputSink(ctx.max_output, ctx.spill_dir / f"{ctx.call_id}.txt", redactor=ctx.redactor)
        self.withheld = ctx.withheld
        self.count = 0

    def add(self, relative: str) -> None:
        if self.withheld is not None and self.withheld(self.raw_prefix + relative):
            return
        if glob_matches(relative, self.pattern):
            self.count += 1
            self.sink.write(f"{self.prefix}{shown_name(relative)}\n")

    def discard(self) -> None:
        self.sink.close()
        if self.sink.truncated:
            self.sink.spill_path.unlink(missing_ok=True)

    def result(self) -> ToolResult:
        if not self.count:
            self.sink.close()
            return ToolResult(f"No files match {self.pattern!r}.")
        return ToolResult(self.sink.render(), data={"count": self.count, **self.sink.cut_data()})


async def python_glob(base: Path, pattern: str, ctx: ToolContext) -> ToolResult:
    """The pure-Python glob of folder ``base`` (the reference ripgrep must agree with), in a worker process."""
    listing = _Listing(pattern, base, ctx)
    request = {"mode": "glob", "base": os.fspath(base), "glob": pattern, "hidden": names_hidden(pattern)}
    failed = await search(request, lambda relative, _line, _text: listing.add(relative))
    if failed is not None:
        listing.discard()
        return ToolResult.error(failed)
    return listing.result()
