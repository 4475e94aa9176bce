"""Provides how each transcript entry looks: a Rich renderable per entry, folded or open.

The view (``widgets.transcript_view``) turns these into lines once per entry,
width and version, and caches them. Everything the model or a tool said is
drawn through ``terminal_safe``, so no escape sequence reaches the terminal.
Code (Markdown code blocks, an edit's diff, a ``read`` result) takes the
syntax colours of the theme (``tui.highlight``) the view passes in.
A running call shows the seconds it has run and its latest output line
(folded) or last lines (open), each line as a terminal would leave it after
its carriage returns (a progress bar shows its latest state).
"""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.syntax import Syntax
from rich.text import Text

from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.base import describe_call
from chimera.core.wording import describe_timing, plural
from chimera.tui.highlight import ThemeSyntax, code_markdown, default_syntax, highlight_read
from chimera.tui.state import Entry

__all__ = ["render_entry", "settled_length", "summary_line"]

LIVE_SHOWN = 20  # lines of a running call's output shown when it is open
_SEVERITY = {"info": "cyan", "success": "green", "warning": "yellow", "error": "bold red"}
_STATUS = {
    "running": ("…", "yellow"),
    "done": ("✓", "green"),
    "failed": ("✗", "bold red"),
    "cancelled": ("⏹", "yellow"),
}


def render_entry(entry: Entry, syntax: ThemeSyntax | None = None) -> RenderableType:
    """What ``entry`` shows, as its fold state says, its code in ``syntax``'s colours (the default
    theme's if not given). A text entry still streaming (an answer's open tail) shows its code plain."""
    syntax = syntax or default_syntax()
    text = terminal_safe(entry.text)
    match entry.kind:
        case "user":
            return Text.assemble(("› ", "bold cyan"), (text, "bold"))
        case "steering":
            return Text.assemble(("↳ ", "cyan"), (text, "italic"))
        case "text":
            return code_markdown(text, syntax, highlight=not entry.streaming)
        case "thinking":
            head = Text(f"{_arrow(entry)} thinking · {plural(len(entry.text.splitlines()) or 1, 'line')}", "dim")
            return head if entry.folded else Group(head, Text(text, "dim italic"))
        case "tool":
            return _tool(entry, syntax)
        case "plan":
            return Group(*(_plan_step(step, check) for step, check in zip(entry.steps, entry.checks, strict=False)))
        case "compaction":
            head = Text(f"{_arrow(entry)} {terminal_safe(entry.name)}", "cyan")
            return head if entry.folded else Group(head, code_markdown(text, syntax))
        case "switch":
            return Text(text, "bold cyan")
        case _:
            return Text(text, _SEVERITY.get(entry.severity, ""))


def summary_line(entry: Entry) -> str:
    """A tool call in one line: its name, the argument that matters, status, time and the size of its output."""
    mark, _ = _STATUS.get(entry.status, ("?", ""))
    parts = [f"{mark} {entry.name}  {describe_call(entry.name, entry.args, 60)}".rstrip()]
    if entry.status == "running":
        parts.append(f"running {_elapsed(entry.elapsed)}")
        if entry.folded:  # its latest words, when it has printed any
            latest = next((line.strip() for line in reversed(_screen_lines(entry.output)) if line.strip()), "")
            parts.append(latest[:80])
    elif entry.duration_ms is not None:
        parts.append(describe_timing(entry.ended, entry.duration_ms))
    if entry.output and entry.status in {"done", "failed"}:
        parts.append(plural(entry.output.count("\n") + (not entry.output.endswith("\n")), "line"))
    return terminal_safe(" · ".join(part for part in parts if part), one_line=True)


def _tool(entry: Entry, syntax: ThemeSyntax) -> RenderableType:
    _, style = _STATUS.get(entry.status, ("?", ""))
    head = Text.assemble((f"{_arrow(entry)} ", "dim"), (summary_line(entry), style))
    diff = entry.data.get("diff")
    shown_diff = isinstance(diff, str) and bool(diff) and entry.status == "done"
    if entry.folded:
        return head
    parts: list[RenderableType] = [head]
    if not shown_diff:  # an edit's diff says what its arguments would
        parts.append(Text(terminal_safe(json.dumps(entry.args, ensure_ascii=False)), "dim"))
    if shown_diff:
        parts.append(Syntax(terminal_safe(str(diff).rstrip("\n")), "diff", theme=syntax))  # on the view's background
    elif entry.status != "running":
        output = terminal_safe(entry.output.rstrip("\n")) or "(no output)"
        path = entry.args.get("path")
        coloured = None
        if entry.name == "read" and entry.status == "done" and isinstance(path, str):
            coloured = highlight_read(output, path, syntax)
        parts.append(coloured or Text(output, "red" if entry.status == "failed" else ""))
    elif entry.output:
        lines = _screen_lines(entry.output)
        shown = ["…", *lines[-LIVE_SHOWN:]] if len(lines) > LIVE_SHOWN else lines
        parts.append(Text(terminal_safe("\n".join(shown)), "dim"))
    return Group(*parts)


def _screen_lines(output: str) -> list[str]:
    """Live output's lines as a terminal leaves them: what follows a line's last carriage return."""
    lines = output.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r").rpartition("\r")[2] for line in lines]


def _elapsed(seconds: int) -> str:
    """``7s``, ``1m 05s``, ``2h 03m``."""
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m {seconds % 60:02d}s"
    return f"{seconds // 3600}h {seconds % 3600 // 60:02d}m"


def _plan_step(step: str, check: bool | None) -> Text:
    mark, style = {True: ("☑", "green"), False: ("☒", "red"), None: ("☐", "")}[check]
    return Text.assemble((f"{mark} ", style), terminal_safe(step))


def _arrow(entry: Entry) -> str:
    return "▸" if entry.folded else "▾"


def settled_length(text: str) -> int:
    """How much of streaming Markdown is finished blocks: up to its last blank line outside a code
    fence (what follows may still change how it renders)."""
    settled = 0
    fenced = False
    position = 0
    for line in text.splitlines(keepends=True):
        position += len(line)
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
        elif not stripped and not fenced and line.endswith("\n") and position < len(text):
            settled = position
    return settled
