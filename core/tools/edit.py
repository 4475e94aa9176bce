"""Provides the ``edit`` tool: replace an exact piece of a file, with a diff of the change."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from chimera.core.difflines import unified_diff
from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.change_preview import preview_edit
from chimera.core.tools.edit_plan import plan_edit
from chimera.core.tools.files import NotRegularFile, open_regular, replace_text
from chimera.core.tools.paths import display_path, resolve_in_workspace

__all__ = ["Edit"]


class Edit:
    name = "edit"
    description = (
        "Replace `old` with `new` in a file. `old` must match exactly once (include surrounding "
        "lines to make it unique) unless `replace_all` is true."
    )
    input_schema = schema(
        {
            "path": {"type": "string", "description": "Path relative to the workspace."},
            "old": {"type": "string", "description": "The exact text to replace."},
            "new": {"type": "string", "description": "The replacement text."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence."},
        },
        ["path", "old", "new"],
    )
    read_only = False

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path = resolve_in_workspace(ctx.workspace, args["path"])
        return await asyncio.to_thread(_edit, path, args["old"], args["new"], bool(args.get("replace_all", False)), ctx)

    def preview(self, args: dict[str, Any], workspace: Path) -> str:
        """What this call would do to the file as it is now (see ``change_preview``); blocking."""
        return preview_edit(workspace, args["path"], args["old"], args["new"], bool(args.get("replace_all", False)))


def _edit(path: Path, old: str, new: str, replace_all: bool, ctx: ToolContext) -> ToolResult:
    shown = display_path(ctx.workspace, path)
    if not path.exists():
        return ToolResult.error(f"{shown} does not exist: use write to create it")
    if not old:
        return ToolResult.error("`old` is empty: give the exact text to replace")
    if old == new:
        return ToolResult.error("`old` and `new` are the same: nothing would change")
    try:
        with open_regular(path) as fh:  # a FIFO or a device is refused, never waited on
            raw = fh.read()
    except NotRegularFile as err:
        return ToolResult.error(err.describe(shown))
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        # Rewriting would turn every undecodable byte in the file into U+FFFD: refuse instead.
        return ToolResult.error(
            f"{shown} is not UTF-8 text (byte {raw[err.start]:#04x} at offset {err.start}): "
            "change it with bash (for example sed), or rewrite it whole with write"
        )
    plan = plan_edit(text, old, new, replace_all, shown)
    if isinstance(plan, str):
        return ToolResult.error(plan)
    updated = plan.apply(text)
    replace_text(path, updated)
    diff = unified_diff(text, updated, shown)
    count = len(plan.starts)
    plural = "s" if count != 1 else ""
    at = ", ".join(str(n) for n in plan.lines[:10])
    return ToolResult(
        f"Edited {shown}: replaced {count} occurrence{plural} ({'lines' if count > 1 else 'line'} {at}).",
        data={"path": shown, "diff": diff},
    )
