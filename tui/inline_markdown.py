"""Provides ``inline_markdown``: one line of text with its inline Markdown drawn (a plan step, say)."""

from __future__ import annotations

import re

from rich.style import Style
from rich.text import Text

from chimera.core.terminal_text import terminal_safe
from chimera.tui.look import BOLD, Look

__all__ = ["inline_markdown"]

_INLINE = re.compile(r"`([^`]+)`|\*\*([^*]+)\*\*|__([^_]+)__")


def inline_markdown(step: str, look: Look, base: Style | None = None) -> Text:
    """A step's inline Markdown drawn: ```code``` in the theme's code colour, ``**bold**`` bold; the rest as
    written (made safe for the terminal)."""
    text = Text(style=base or Style.null())
    safe = terminal_safe(step, one_line=True)
    position = 0
    for match in _INLINE.finditer(safe):
        text.append(safe[position : match.start()])
        code, bold, under = match.groups()
        text.append(code, look["inline_code"] + BOLD) if code is not None else text.append(bold or under, BOLD)
        position = match.end()
    text.append(safe[position:])
    return text
