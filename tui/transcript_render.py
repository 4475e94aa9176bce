"""Provides how each transcript entry looks: a Rich renderable per entry, folded or open.

The view (``widgets.transcript_view``) turns these into lines once per entry,
width and version, and caches them. Everything the model or a tool said is
drawn through ``terminal_safe``, so no escape sequence reaches the terminal.
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import Group, RenderableType
from rich.markdown import Markdown
from rich.text import Text

from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import plural
from chimera.tui.state import Entry

__all__ = ["render_entry", "summary_line"]

_SEVERITY = {"info": "cyan", "success": "green", "warning": "yellow", "error": "bold red"}
_STATUS = {
    "running": ("…", "yellow"),
    "done": ("✓", "green"),
    "failed": ("✗", "bold red"),
    "cancelled": ("⏹", "yellow"),
}
_ARGUMENT_KEYS = ("command", "path", "pattern")


def render_entry(entry: Entry) -> RenderableType:
    """What ``entry`` shows, as its fold state says."""
    text = terminal_safe(entry.text)
    match entry.kind:
        case "user":
            return Text.assemble(("› ", "bold cyan"), (text, "bold"))
        case "steering":
            return Text.assemble(("↳ ", "cyan"), (text, "italic"))
        case "text":
            return Markdown(text, code_theme="monokai")
        case "thinking":
            head = Text(f"{_arrow(entry)} thinking · {plural(len(entry.text.splitlines()) or 1, 'line')}", "dim")
            return head if entry.folded else Group(head, Text(text, "dim italic"))
        case "tool":
            return _tool(entry)
        case "plan":
            return Group(*(_plan_step(step, check) for step, check in zip(entry.steps, entry.checks, strict=False)))
        case "compaction":
            head = Text(f"{_arrow(entry)} {terminal_safe(entry.name)}", "cyan")
            return head if entry.folded else Group(head, Markdown(text))
        case _:
            return Text(text, _SEVERITY.get(entry.severity, ""))


def summary_line(entry: Entry) -> str:
    """A tool call in one line: its name, short arguments, status, duration and the size of its output."""
    mark, _ = _STATUS.get(entry.status, ("?", ""))
    parts = [f"{mark} {entry.name} {_short_arguments(entry.args)}".rstrip()]
    if entry.duration_ms is not None and entry.status != "running":
        parts.append(f"{entry.duration_ms / 1000:.2f}s")
    if entry.output:
        parts.append(plural(entry.output.count("\n") + (not entry.output.endswith("\n")), "line"))
    return terminal_safe(" · ".join(parts), one_line=True)


def _tool(entry: Entry) -> RenderableType:
    _, style = _STATUS.get(entry.status, ("?", ""))
    head = Text.assemble((f"{_arrow(entry)} ", "dim"), (summary_line(entry), style))
    if entry.folded:
        return head
    arguments = Text(terminal_safe(json.dumps(entry.args, ensure_ascii=False, indent=1)), "dim")
    output = Text(terminal_safe(entry.output.rstrip("\n")) or "(no output)")
    return Group(head, arguments, output)


def _plan_step(step: str, check: bool | None) -> Text:
    mark, style = {True: ("☑", "green"), False: ("☒", "red"), None: ("☐", "")}[check]
    return Text.assemble((f"{mark} ", style), terminal_safe(step))


def _arrow(entry: Entry) -> str:
    return "▸" if entry.folded else "▾"


def _short_arguments(args: dict[str, Any]) -> str:
    for key in _ARGUMENT_KEYS:
        value = args.get(key)
        if isinstance(value, str):
            return value if len(value) <= 60 else value[:59] + "…"
    return ""
