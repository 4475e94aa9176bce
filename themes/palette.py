"""Provides the colours a theme gives the transcript and the code, beyond Textual's own.

A theme file's ``[transcript]`` and ``[code]`` tables name them (``TRANSCRIPT``,
``CODE``); they travel inside the Textual ``Theme`` as CSS variables
(``transcript-tool-failed``, ``code-keyword``: ``variable``), so a theme is
one object wherever it is registered. A colour a theme leaves out takes one of
the theme's own colours (its role: ``primary``, ``success``… or ``muted``, the
foreground faded 30% toward the background), so any Textual theme, Chimera's
or not, colours everything. ``palette`` resolves every name for one theme.
"""

from __future__ import annotations

from textual.color import Color
from textual.theme import Theme

__all__ = ["CODE", "TABLES", "TRANSCRIPT", "palette", "variable"]

# What each colour of the transcript is for, and the theme colour it takes when a theme does not name it.
TRANSCRIPT: dict[str, str] = {
    "user": "primary",  # the marker before a task the person sent
    "steering": "primary",  # the marker before words sent while a run works
    "thinking": "muted",  # the model's thinking
    "muted": "muted",  # a call's arguments and live output, fold arrows, table borders
    "tool_running": "warning",  # a call's line while it runs
    "tool_done": "success",
    "tool_failed": "error",  # a failed call's line and its output
    "tool_cancelled": "warning",
    "notice_info": "primary",  # Chimera's own notes in the conversation, by level
    "notice_success": "success",
    "notice_warning": "warning",
    "notice_error": "error",
    "plan_checked": "success",  # a plan step checked off
    "plan_failed": "error",  # a plan step whose check failed
    "diff_added": "success",  # an edit's added lines (and a diff in an answer)
    "diff_removed": "error",
    "marker": "primary",  # a switch of branch, a compaction
    "cursor": "primary",  # the mark beside the entry the cursor is on
    "heading": "secondary",  # Markdown in answers: headings, inline code, links, quotes, list numbers
    "inline_code": "accent",
    "link": "primary",
    "quote": "secondary",
    "list_marker": "primary",
}

# Syntax colours: a kind of token each (pygments' names, in snake case); unnamed kinds take their parent's colour.
CODE: dict[str, str] = {
    "keyword": "secondary",
    "keyword_constant": "warning",
    "keyword_type": "accent",
    "operator_word": "secondary",
    "name_builtin": "accent",
    "name_function": "primary",
    "name_class": "accent",
    "name_decorator": "accent",
    "name_exception": "error",
    "name_tag": "error",
    "name_attribute": "warning",
    "name_constant": "warning",
    "name_label": "secondary",
    "string": "success",
    "string_doc": "success",
    "string_escape": "accent",
    "string_interpol": "accent",
    "string_affix": "secondary",
    "number": "warning",
    "literal_date": "warning",
    "comment": "muted",
    "comment_preproc": "secondary",
    "comment_preprocfile": "success",
    "generic_heading": "primary",
    "generic_subheading": "primary",
    "generic_error": "error",
    "generic_traceback": "error",
    "generic_prompt": "muted",
    "generic_output": "muted",
    "error": "error",
}

TABLES: dict[str, dict[str, str]] = {"transcript": TRANSCRIPT, "code": CODE}
MUTED_FADE = 0.3  # how far ``muted`` fades the foreground toward the background


def variable(table: str, key: str) -> str:
    """The CSS variable that carries ``[table] key`` inside a Textual theme: ``transcript-tool-failed``."""
    return f"{table}-{key.replace('_', '-')}"


def palette(theme: Theme) -> dict[str, Color | None]:
    """Every colour of ``theme``'s transcript and code, by ``table.key`` (``transcript.user``, ``code.keyword``):
    the theme's own, else the theme colour its role names. None means "faded" in a theme of terminal (ANSI)
    colours, which cannot be blended: draw it dim instead."""
    roles = theme.to_color_system().generate()
    background = Color.parse(roles["background"])
    foreground = Color.parse(roles["foreground"])
    ansi = foreground.ansi is not None or background.ansi is not None
    muted = None if ansi else foreground.blend(background, MUTED_FADE)
    colours: dict[str, Color | None] = {}
    for table, keys in TABLES.items():
        for key, role in keys.items():
            given = theme.variables.get(variable(table, key))
            if given is not None:
                colour = Color.parse(given)
                colours[f"{table}.{key}"] = background + colour if colour.a < 1 and colour.ansi is None else colour
            else:
                colours[f"{table}.{key}"] = muted if role == "muted" else Color.parse(roles[role])
    return colours
