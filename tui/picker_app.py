"""Provides ``PickerApp``: ``chimera --resume`` with no id, the session picker on its own.

It shows :class:`~chimera.tui.screens.sessions.SessionPicker` as its first screen
and ends with the chosen session's id (``return_value``), or None when the
person closed it; it starts no session and writes nothing. The command then
resumes the chosen session in the workbench.
"""

from __future__ import annotations

from pathlib import Path

from textual import events
from textual.app import App

from chimera.themes import DEFAULT_THEME, THEMES
from chimera.tui.outside import paste_as_text
from chimera.tui.screens.sessions import SessionPicker

__all__ = ["PickerApp"]


class PickerApp(App[str | None]):
    """The session picker alone; exits with the chosen session's id, or None."""

    TITLE = "Chimera"

    def __init__(self, workdir: Path | None = None) -> None:
        """``workdir``: the workspace whose sessions come first."""
        super().__init__()
        self.workdir = workdir

    async def on_event(self, event: events.Event) -> None:
        """A paste into the filter (or the palette's line) shows as its characters (``paste_as_text``)."""
        if isinstance(event, events.Paste) and not event.is_forwarded:
            paste_as_text(event, self.focused)
        await super().on_event(event)

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        self.theme = DEFAULT_THEME
        self.push_screen(SessionPicker(self.workdir), self.exit)
