"""Provides ``ToolCallView``: one tool call in the conversation, its arguments and its result.

The call and its output are the model's and the tool's: drawn with every character that
could steer the terminal shown as an escape (``terminal_safe``); the attributes keep them exact.
"""

from __future__ import annotations

from typing import Any

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text
from textual.widgets import Static

from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.base import describe_call
from chimera.core.wording import describe_timing

__all__ = ["ToolCallView"]

_PREVIEW_LINES = 4


class ToolCallView(Static):
    """A tool call: a header line, then a short preview of its result once it finishes."""

    DEFAULT_CSS = """
    ToolCallView {
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1 0 2;
    }
    ToolCallView.-running { color: $text-muted; }
    """

    def __init__(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        super().__init__(classes="-running")
        self.call_id = call_id
        self.tool_name = name
        self.args = args
        self.output = ""
        self.is_error = False
        self.update(self._render_call(Text("running…", style="dim")))

    def _header(self) -> Text:
        mark = ("● ", "bold red" if self.is_error else "bold green")
        call = describe_call(self.tool_name, self.args)
        return Text.assemble(
            mark, (terminal_safe(self.tool_name, one_line=True), "bold"), "  ", terminal_safe(call, one_line=True)
        )

    def _render_call(self, body: RenderableType) -> RenderableType:
        return Group(self._header(), Group(Text("  ⎿  ", style="dim", end=""), body))

    def finish(self, output: str, *, is_error: bool, duration_ms: float | None, data: dict[str, Any]) -> None:
        """Show the result: a few lines of output, or the diff of an edit; then how long it ran.

        ``duration_ms`` None (a call from a recorded session) shows no time.
        """
        self.output = output
        self.is_error = is_error
        self.remove_class("-running")
        lines = terminal_safe(output).splitlines() or [""]
        summary = Text("" if duration_ms is None else describe_timing(output, duration_ms), style="dim")
        preview = Text()
        for index, line in enumerate(lines[:_PREVIEW_LINES]):
            preview.append("  ⎿  " if index == 0 else "\n     ", style="dim")
            preview.append(line, style="red" if is_error else "")
        if len(lines) > _PREVIEW_LINES:
            preview.append(f"\n     … {len(lines) - _PREVIEW_LINES} more lines", style="dim")
        parts: list[RenderableType] = [self._header(), preview]
        diff = data.get("diff")
        if isinstance(diff, str) and diff and not is_error:
            parts.append(Syntax(terminal_safe(diff), "diff", theme="monokai", background_color="default"))
        if summary:
            parts.append(Text.assemble("     ", summary))
        self.update(Group(*parts))
