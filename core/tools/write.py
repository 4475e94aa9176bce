"""Provides the ``write`` tool: create or overwrite a file, making parent folders.

Its result says, for the session's checkpoints, whether it created the file and
which folders it made: the only files and folders a switch may count as the agent's.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.change_preview import preview_write
from chimera.core.tools.files import NotRegularFile, replace_text, special_kind
from chimera.core.tools.paths import display_path, resolve_in_workspace

__all__ = ["Write"]


class Write:
    name = "write"
    description = "Write a file in the workspace, replacing it if it exists. Parent folders are created."
    input_schema = schema(
        {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "content": {"type": "string", "description": "The whole new content of the file."},
        },
        ["path", "content"],
    )
    read_only = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.workspace, args["path"])
        return await asyncio.to_thread(_write, path, args["content"], ctx)

    def preview(self, args: dict[str, Any], workspace: Path) -> str:
        """What this call would do to the file as it is now (see ``change_preview``); blocking."""
        return preview_write(workspace, args["path"], args["content"])


def _write(path: Path, content: str, ctx: ToolContext) -> ToolResult:
    shown = display_path(ctx.workspace, path)
    if path.is_dir():
        return ToolResult.error(f"{shown} is a folder")
    created = not path.exists()
    kind = None if created else special_kind(path.stat().st_mode)
    if kind is not None:  # a FIFO, socket or device is left alone, not replaced by a file
        return ToolResult.error(NotRegularFile(kind).describe(shown))
    folders = _missing_folders(ctx.workspace, path.parent)
    path.parent.mkdir(parents=True, exist_ok=True)
    replace_text(path, content)
    lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
    verb = "Created" if created else "Overwrote"
    noun = "line" if lines == 1 else "lines"
    data = {"path": shown, "created": created, "folders": [display_path(ctx.workspace, f) for f in folders]}
    return ToolResult(f"{verb} {shown} ({lines} {noun}).", data=data)


def _missing_folders(workspace: Path, folder: Path) -> list[Path]:
    """The folders from ``folder`` up to the workspace that do not exist yet (``write`` makes them), outermost first."""
    missing = []
    while folder != workspace and not os.path.lexists(folder) and workspace in folder.parents:
        missing.append(folder)
        folder = folder.parent
    return missing[::-1]
