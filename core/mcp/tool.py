"""Provides ``McpTool``: one tool of an MCP server, as a tool of Chimera's (``core.tools.base.Tool``).

The model sees it under its ``mcp__SERVER__TOOL`` name (``names.py``), with the
server's title, description and input schema. It counts as a read when the server
says so (``readOnlyHint``), and as an action otherwise. Its result goes through the
same ``OutputSink`` as a command's: capped, the rest saved to a file the model can
``read``, secrets masked. Progress the server reports goes to the person watching the
call, never into the result.
"""

from __future__ import annotations

from typing import Any

from chimera.core.mcp.connection import CallFailed, Connection, ServerTool
from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.output import OutputSink

__all__ = ["McpTool"]


class McpTool:
    """A server's tool, called through its connection."""

    def __init__(self, name: str, tool: ServerTool, connection: Connection) -> None:
        self.name = name
        self.tool = tool
        self.connection = connection
        title = f"{tool.title}: " if tool.title and tool.title != tool.name else ""
        self.description = f"{title}{tool.description}".strip() or f"The tool {tool.name} of {connection.name}."
        self.input_schema = tool.input_schema
        self.read_only = tool.read_only

    @property
    def server(self) -> str:
        return self.connection.name

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        data: dict[str, Any] = {"server": self.server, "tool": self.tool.name}

        def progress(done: float, total: float | None, message: str | None) -> None:
            if ctx.on_output is not None:
                amount = f"{done:g}/{total:g}" if total else f"{done:g}"
                ctx.on_output(f"[progress {amount}{f': {message}' if message else ''}]\n")

        try:
            output = await self.connection.call(self.tool.name, args, progress)
        except CallFailed as err:
            return ToolResult(f"Error: {self.server}'s {self.tool.name} failed: {err}", is_error=True, data=data)
        sink = OutputSink(ctx.max_output, ctx.spill_dir / f"{ctx.call_id}.txt", redactor=ctx.redactor)
        sink.write(output.text)
        text = sink.render()
        data.update(sink.cut_data())
        if output.images:
            data["images"] = output.images
        if output.structured is not None:
            data["structured"] = output.structured
        if output.is_error:
            return ToolResult(text or f"Error: {self.tool.name} failed and said nothing", is_error=True, data=data)
        return ToolResult(text or "(no output)", data=data)
