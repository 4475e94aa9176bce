"""Provides the one door through which text Chimera did not write reaches the screen.

The model's words, a tool's arguments and output, paths, labels, titles, session data, a server's errors and
what the person typed may hold Textual markup (``[/]``, ``[@click=app.quit]``, ``[$background on
$background]``) or characters that steer a terminal (ESC, OSC, bidi overrides, a lone ``\\r``). Drawn through
here it stays data: :func:`literal` makes it a ``Text`` with every such character shown escaped and no markup
read, and :func:`tell` is the app's notifications, which never read markup either; :func:`paste_as_text`
makes a paste into a field that draws what it holds raw (a search, a filter, a reason, the palette's line)
show its controls escaped too. Markup is only ever for Chimera's own literals, and no ``Static`` reads it
(each is built with ``markup=False``):
``tests/tui/test_outside_text.py`` holds these rules over the code, and walks every screen with hostile text.
"""

from __future__ import annotations

import re
from typing import Protocol

from rich.style import StyleType
from rich.text import Text
from textual import events
from textual.notifications import SeverityLevel
from textual.widget import Widget
from textual.widgets import Input

from chimera.core.terminal_text import terminal_safe

__all__ = ["Notifier", "literal", "paste_as_text", "tell"]


class Notifier(Protocol):
    """Anything that can raise a notification (the app, a screen, a widget: Textual's ``notify``)."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = True,
    ) -> None: ...


def literal(text: object, style: StyleType = "", *, one_line: bool = False) -> Text:
    """``text`` as it is, for the screen: markup left unread, terminal controls shown escaped (with
    ``one_line``, line breaks and tabs too)."""
    return Text(terminal_safe(str(text), one_line=one_line), style=style, end="")


def tell(
    where: Notifier,
    message: str,
    *,
    severity: SeverityLevel = "information",
    timeout: float | None = None,
    title: str = "",
    one_line: bool = False,
) -> None:
    """A notification (a toast) saying ``message`` literally, whatever it holds (``one_line``: its line breaks
    shown escaped too)."""
    where.notify(
        terminal_safe(message, one_line=one_line),
        title=terminal_safe(title, one_line=True),
        severity=severity,
        timeout=timeout,
        markup=False,
    )


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def paste_as_text(event: events.Paste, focused: Widget | None) -> None:
    """A paste about to reach ``focused`` made text it can show as it is: Textual's ``Input`` and ``TextArea``
    draw what they hold raw, so an escape sequence or a bidi override pasted into a search, a filter, a
    reason, a name or the palette's line would steer the terminal. A one-line field gets the paste's first
    line with every control shown escaped; a text area every line, escaped alike. A widget that reads pastes
    itself (``reads_pastes``: the workbench's input, which folds and escapes them) gets the paste as it is."""
    if focused is None or getattr(focused, "reads_pastes", False):
        return
    if isinstance(focused, Input):
        event.text = terminal_safe(_LINE_BREAK.split(event.text, maxsplit=1)[0], one_line=True)
        return
    from textual.widgets import TextArea  # (imported by then: a text area has the focus)

    if isinstance(focused, TextArea):
        event.text = terminal_safe(event.text)
