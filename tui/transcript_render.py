"""Provides how each transcript entry looks: a Rich renderable per entry, folded or open.

The view (``widgets.transcript_view``) turns these into lines once per entry,
width and version, and caches them. Everything the model or a tool said is
drawn through ``terminal_safe``, so no escape sequence reaches the terminal.
Every colour comes from the theme's ``Look`` the view passes in
(``tui.look``): the transcript's own colours, and code (Markdown code blocks,
an edit's diff, a ``read`` result) in the theme's syntax colours.
A running call shows the seconds it has run and its latest output line
(folded) or last lines (open), each line as a terminal would leave it after
its carriage returns (a progress bar shows its latest state).
"""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.style import Style
from rich.text import Text

from chimera.core.difflines import diff_lines
from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.base import describe_call
from chimera.core.wording import describe_output, describe_timing, plural
from chimera.tui.inline_markdown import inline_markdown
from chimera.tui.look import BOLD, ITALIC, Look, default_look
from chimera.tui.state import Entry

__all__ = ["render_entry", "settled_length", "summary_line"]

LIVE_SHOWN = 20  # lines of a running call's output shown when it is open
_MARKS = {"asking": "?", "running": "…", "done": "✓", "failed": "✗", "cancelled": "⏹"}  # a call's status: its mark
_BOLD_LEVELS = {"error"}  # notices drawn bold as well as in their colour


CUT_OFF = "⏹ interrupted here: this part of the answer was not kept, and the model never sees it"


def render_entry(entry: Entry, look: Look | None = None) -> RenderableType:
    """What ``entry`` shows, as its fold state says, in ``look``'s colours (the default theme's if not
    given). A text entry still streaming (an answer's open tail) shows its code plain."""
    look = look or default_look()
    text = terminal_safe(entry.text)
    match entry.kind:
        case "user" | "steering" if entry.data.get("left_out"):  # sent, but no answer followed: not in the context
            mark = "› " if entry.kind == "user" else "↳ "
            why = f"  (left out: {entry.data['left_out']}, /resend sends it again)"
            return Text.assemble(
                (mark, look["muted"]), (text, look["muted"] + Style(strike=True)), (why, look["muted"])
            )
        case "user":
            return Text.assemble(("› ", look["user"] + BOLD), (text, BOLD))
        case "steering":
            return Text.assemble(("↳ ", look["steering"]), (text, ITALIC))
        case "text" if entry.data.get("cut_off"):
            shown = _markdown(text, look, highlight=True)
            return Group(shown, Text(CUT_OFF, look["notice_warning"]))
        case "text":
            return _markdown(text, look, highlight=not entry.streaming)
        case "thinking":
            lines = plural(len(entry.text.splitlines()) or 1, "line")
            head = Text(f"{_arrow(entry)} thinking · {lines}", look["thinking"])
            return head if entry.folded else Group(head, Text(text, look["thinking"] + ITALIC))
        case "tool":
            return _tool(entry, look)
        case "plan":
            steps = zip(entry.steps, entry.checks, strict=False)
            return Group(*(_plan_step(step, check, look) for step, check in steps))
        case "compaction":
            head = Text(f"{_arrow(entry)} {terminal_safe(entry.name)}", look["marker"])
            return head if entry.folded else Group(head, _markdown(text, look))
        case "switch":
            return Text(text, look["marker"] + BOLD)
        case "reflection" | "reminder" | "checkpoint" | "candidate":
            return _work(entry, text, look)
        case _:
            return Text(text, _notice_style(entry.severity, look))


def _work(entry: Entry, text: str, look: Look) -> RenderableType:
    """A step of the strategy's own work: a reflection, a reminder, a checkpoint or a candidate; its head
    line, and when open its words."""
    first = next((line.strip() for line in entry.text.splitlines() if line.strip()), "")
    style = look["marker"]
    match entry.kind:
        case "reflection":
            head = f"↺ reflection · {plural(len(entry.text.splitlines()) or 1, 'line')}"
            style = look["thinking"]
        case "reminder":
            head = f"⚑ reminder · {_clip(first, 80)}"
            style = look["muted"]
        case "checkpoint":
            label = f" {entry.name}" if entry.name else ""
            head = f"◆ checkpoint{label} · files pinned at {entry.text[:12]}"
        case _:
            head, style = _candidate_head(entry, first, look)
    line = Text(f"{_arrow(entry)} {terminal_safe(head, one_line=True)}", style)
    if entry.folded or not text:  # one line: cut at the width, with an ellipsis (open, it wraps whole)
        line.no_wrap, line.overflow = True, "ellipsis"
        return line
    return Group(line, Text(text, look["muted"] if entry.kind != "candidate" else Style.null()))


def _candidate_head(entry: Entry, first: str, look: Look) -> tuple[str, Style]:
    """``candidate 2 of 3 · score 9 · ✓ taken: why`` (before the choice: its first words)."""
    data = entry.data
    number = int(data.get("index", 0)) + 1
    of = f" of {data['of']}" if data.get("of") else ""
    parts = [f"candidate {number}{of}"]
    if data.get("score") is not None:
        parts.append(f"score {data['score']}")
    if data.get("chosen"):
        parts.append(f"✓ taken: {data.get('reason', '')}".rstrip(": "))
        return " · ".join(parts), look["tool_done"] + BOLD
    if "chosen" in data:
        parts.append("not taken")
    parts.append(_clip(first, 60))
    return " · ".join(part for part in parts if part), look["muted"]


def _clip(text: str, length: int) -> str:
    """``text`` in at most ``length`` characters, ending in ``…`` when it was longer."""
    return text if len(text) <= length else text[: length - 1] + "…"


def _notice_style(severity: str, look: Look) -> Style:
    """A notice's style by its level (``info``, ``success``, ``warning``, ``error``); plain for another."""
    key = f"notice_{severity}"
    if key not in look.styles:
        return Style.null()
    return look[key] + BOLD if severity in _BOLD_LEVELS else look[key]


_SANDBOX_SAID = {"refused": "refused by the sandbox", "outside": "ran outside the sandbox"}


def summary_line(entry: Entry) -> str:
    """A tool call in one line: its name, the argument that matters, status, time and the size of its output."""
    mark = _MARKS.get(entry.status, "?")
    parts = [f"{mark} {entry.name}  {describe_call(entry.name, entry.args, 60)}".rstrip()]
    if entry.status == "asking":
        parts.append("waiting for your answer")
    elif entry.status == "running":
        parts.append(f"running {_elapsed(entry.elapsed)}")
        if entry.folded:  # its latest words, when it has printed any
            latest = next((line.strip() for line in reversed(_screen_lines(entry.output)) if line.strip()), "")
            parts.append(_clip(latest, 80))
    elif entry.duration_ms is not None:
        parts.append(describe_timing(entry.ended, entry.duration_ms))
    parts.append(_SANDBOX_SAID.get(str(entry.data.get("sandbox", "")), ""))
    if entry.output and entry.status in {"done", "failed"} and entry.ended not in {"refused", "declined"}:
        parts.append(describe_output(entry.name, entry.output, entry.data))
    return terminal_safe(" · ".join(part for part in parts if part), one_line=True)


def _status_style(status: str, look: Look) -> Style:
    """A call's line in the colour of its status (a failed one bold too)."""
    key = f"tool_{'running' if status == 'asking' else status}"
    if key not in look.styles:
        return Style.null()
    return look[key] + BOLD if status == "failed" else look[key]


def _markdown(text: str, look: Look, *, highlight: bool = True) -> RenderableType:
    """``text`` as Markdown, its code blocks in ``look``'s syntax colours (plain unless ``highlight``)."""
    from chimera.tui.code_markdown import code_markdown  # markdown-it loads with the first answer drawn

    return code_markdown(text, look.syntax, highlight=highlight)


def _tool(entry: Entry, look: Look) -> RenderableType:
    head = Text.assemble((f"{_arrow(entry)} ", look["muted"]), (summary_line(entry), _status_style(entry.status, look)))
    diff = entry.data.get("diff")
    shown_diff = isinstance(diff, str) and bool(diff) and entry.status == "done"
    if entry.folded:
        return head
    from rich.syntax import Syntax  # (with pygments: when a call is first unfolded, not before the first frame)

    from chimera.tui.highlight import highlight_read

    syntax = look.syntax
    parts: list[RenderableType] = [head]
    if not shown_diff:  # an edit's diff says what its arguments would
        parts.append(Text(terminal_safe(json.dumps(entry.args, ensure_ascii=False)), look["muted"]))
    if shown_diff:
        parts.append(Syntax("\n".join(diff_lines(str(diff))), "diff", theme=syntax))  # on the view's background
    elif entry.status not in {"asking", "running"}:
        output = terminal_safe(entry.output.rstrip("\n")) or "(no output)"
        path = entry.args.get("path")
        coloured = None
        if entry.name == "read" and entry.status == "done" and isinstance(path, str):
            coloured = highlight_read(output, path, syntax)
        parts.append(coloured or Text(output, look["tool_failed"] if entry.status == "failed" else ""))
    elif entry.output:
        lines = _screen_lines(entry.output)
        shown = ["…", *lines[-LIVE_SHOWN:]] if len(lines) > LIVE_SHOWN else lines
        parts.append(Text(terminal_safe("\n".join(shown)), look["muted"]))
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


def _plan_step(step: str, check: bool | None, look: Look) -> Text:
    if check is None:
        return Text.assemble("☐ ", inline_markdown(step, look))
    mark, style = ("☑", look["plan_checked"]) if check else ("☒", look["plan_failed"])
    return Text.assemble((f"{mark} ", style), inline_markdown(step, look))


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
