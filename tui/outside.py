"""Provides the one door through which text Chimera did not write reaches the screen.

The model's words, a tool's arguments and output, paths, labels, titles, session data, a server's errors and
what the person typed may hold Textual markup (``[/]``, ``[@click=app.quit]``, ``[$background on
$background]``) or characters that steer a terminal (ESC, OSC, bidi overrides, a lone ``\\r``). Drawn through
here it stays data: :func:`literal` makes it a ``Text`` with every such character shown escaped and no markup
read, and :func:`tell` is the app's notifications, which never read markup either. Markup is only ever for
Chimera's own literals, and no ``Static`` reads it (each is built with ``markup=False``):
``tests/tui/test_outside_text.py`` holds these rules over the code, and walks every screen with hostile text.
"""

from __future__ import annotations

from typing import Protocol

from rich.style import StyleType
from rich.text import Text
from textual.notifications import SeverityLevel

from chimera.core.terminal_text import terminal_safe

__all__ = ["Notifier", "literal", "tell"]


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
