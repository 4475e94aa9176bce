"""Provides the ``read`` tool: a file's lines, numbered, a page at a time.

Its result's ``data`` says which lines were read (``first``, ``last``: none when ``last`` is below ``first``)
and, with ``cut``, that a line longer than ``MAX_LINE`` reached the model cut.
"""

from __future__ import annotations

import asyncio
import io
import os
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.files import NotRegularFile, open_regular
from chimera.core.tools.paths import display_path, resolve_in_workspace

__all__ = ["Read"]

DEFAULT_LIMIT = 2000
MAX_LINE = 2000
_SNIFF = 8192


class Read:
    name = "read"
    description = (
        "Read a text file from the workspace. Lines come numbered (1-based). "
        f"Reads up to {DEFAULT_LIMIT} lines from `offset`; page on with a larger offset. "
        "Binary files are described, not dumped."
    )
    input_schema = schema(
        {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "offset": {"type": "integer", "minimum": 1, "description": "First line to read (1-based)."},
            "limit": {"type": "integer", "minimum": 1, "description": "How many lines to read."},
        },
        ["path"],
    )
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.workspace, args["path"], extra_roots=(ctx.spill_dir,))
        offset = int(args.get("offset", 1))
        limit = int(args.get("limit", DEFAULT_LIMIT))
        return await asyncio.to_thread(_read, path, offset, limit, ctx)


def _read(path: Path, offset: int, limit: int, ctx: ToolContext) -> ToolResult:
    shown = display_path(ctx.workspace, path)
    if not path.exists():
        return ToolResult.error(f"{shown} does not exist")
    if path.is_dir():
        return ToolResult.error(f"{shown} is a folder: use glob to list it")
    try:
        raw = open_regular(path)  # a FIFO or a device is refused, never waited on
    except NotRegularFile as err:
        return ToolResult.error(err.describe(shown))
    with raw:
        if b"\x00" in raw.read(_SNIFF):
            return _binary(raw.fileno(), shown)
        raw.seek(0)
        return _numbered(
            io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=""), shown, offset, limit, ctx
        )


def _numbered(fh: io.TextIOWrapper, shown: str, offset: int, limit: int, ctx: ToolContext) -> ToolResult:
    cap = ctx.max_output
    out: list[str] = []
    used = 0
    last = offset - 1
    more = False
    cut = False  # a line was cut: the model sees part of it
    with fh:
        for number, line in enumerate(fh, start=1):
            if number < offset:
                continue
            if number >= offset + limit:
                more = True
                break
            if "\x00" in line:  # binary after all (grep agrees: a NUL anywhere makes a file binary)
                return _binary(fh.fileno(), shown)
            text = ctx.redactor.mask(line.rstrip("\r\n"))  # masked before it is cut: never half a secret
            if len(text) > MAX_LINE:
                text = f"{text[:MAX_LINE]}… [line cut at {MAX_LINE} of {len(text):,} characters]"
                cut = True
            entry = f"{number:>6}\t{text}\n"
            if used + len(entry) > cap and out:
                more = True
                break
            out.append(entry)
            used += len(entry)
            last = number
    if not out:
        if offset == 1:
            return ToolResult(f"{shown} is empty.", data={"path": shown, "first": 1, "last": 0})
        return ToolResult.error(f"{shown} has fewer than {offset} lines")
    body = "".join(out)
    if more:
        body += f"[... more lines follow: read again with offset={last + 1} ...]\n"
    data: dict[str, Any] = {"path": shown, "first": offset, "last": last}  # the lines read: last - first + 1
    if cut:
        data["cut"] = True
    return ToolResult(body, data=data)


def _binary(fd: int, shown: str) -> ToolResult:
    size = os.fstat(fd).st_size
    return ToolResult(f"{shown} is a binary file ({size:,} bytes); it is not shown as text.")
