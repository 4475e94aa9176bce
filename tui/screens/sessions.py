"""Provides ``SessionPicker``: choose a session to resume, from the session catalog.

Newest first, the sessions of the workspace at hand before the others; each
shows its title, then how its last run ended, when it last changed, its turns,
its workspace and its id. Typing filters them (every word must be in the title,
the workspace or the id, so an id's beginning finds its session); ``up`` and
``down`` (``pageup``, ``pagedown``) move; ``enter`` chooses; ``escape`` closes.
The screen is dismissed with the chosen session's id, or None. It reads the
catalog (``core.sessions.listing.read_sessions``, off the event loop), never
every session; what it shows is only shown, never run. ``chimera --resume``
with no id opens it first (``PickerApp``), and the workbench opens it with
``focus.open_screen(app, SessionPicker(workdir), ...)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from chimera.core.errors import ChimeraError
from chimera.core.home import chimera_home
from chimera.core.sessions.catalog import CatalogEntry
from chimera.core.sessions.listing import ordered, read_sessions
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import plural
from chimera.tui.widgets.session_list import SessionList
from chimera.tui.workbench.focus import key_line, place_named

__all__ = ["SessionPicker"]

HINT = key_line(place_named("sessions").keys)


class SessionPicker(ModalScreen[str | None]):
    """The sessions to resume; dismissed with the chosen one's id, or None."""

    DEFAULT_CSS = """
    SessionPicker {
        align: center middle;
    }
    SessionPicker > Vertical {
        width: 100%;
        max-width: 120;
        height: 100%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    SessionPicker #picker-title {
        text-style: bold;
    }
    SessionPicker #picker-filter {
        margin: 1 0 0 0;
    }
    SessionPicker #picker-count, SessionPicker #picker-hint {
        color: $text-muted;
    }
    SessionPicker #picker-count {
        margin-bottom: 1;
    }
    """

    PLACE = "sessions"  # in the focus model (``tui.workbench.focus``)
    AUTO_FOCUS = "#picker-filter"  # what is typed filters, from the first key

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close", priority=True),  # (as the help's: words typed behind it are the input's)
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
    ]

    def __init__(self, workdir: Path | str | None = None, *, home: Path | None = None) -> None:
        """``workdir``: the workspace whose sessions come first; ``home``: the Chimera home (default: its own)."""
        super().__init__()
        self.workdir = None if workdir is None else str(workdir)
        self.home = home
        self.sessions: list[CatalogEntry] | None = None  # None until read
        self.query_text = ""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Resume a session", id="picker-title", markup=False)
            yield Input(placeholder="Filter by title, workspace or id", id="picker-filter")
            yield Static("Reading the sessions…", id="picker-count", markup=False)
            yield SessionList(id="picker-list")
            yield Static(HINT, id="picker-hint", markup=False)

    def on_mount(self) -> None:
        self.read()

    @work(group="picker", exclusive=True, exit_on_error=False)
    async def read(self) -> None:
        """Read the catalog (off the event loop), then list what the filter lets through."""
        try:
            sessions = await read_sessions(self.home if self.home is not None else chimera_home())
        except ChimeraError as err:  # the home itself cannot be used: say so, nothing to list
            self.query_one("#picker-count", Static).update(Text(terminal_safe(str(err), one_line=True)))
            return
        self.sessions = ordered(sessions, self.workdir)
        self._filter()

    def on_input_changed(self, event: Input.Changed) -> None:
        self.query_text = event.value
        self._filter()

    def _filter(self) -> None:
        if self.sessions is None:
            return
        shown = [entry for entry in self.sessions if entry.matches(self.query_text)]
        self.query_one(SessionList).show(shown)
        self.query_one("#picker-count", Static).update(Text(self._count(len(shown))))

    def _count(self, shown: int) -> str:
        total = len(self.sessions or ())
        if not total:
            return "No sessions yet: type a task in the workbench to start one."
        if not self.query_text.strip():
            return f"{plural(total, 'session')}, newest first" + (", this workspace's first" if self.workdir else "")
        wanted = terminal_safe(self.query_text.strip(), one_line=True)
        if not shown:
            return f"No session matches “{wanted}” (of {total})."
        return f"{shown} of {plural(total, 'session')} match “{wanted}”"

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        chosen = self.query_one(SessionList).chosen
        if chosen is not None:
            self.dismiss(chosen.id)

    def on_session_list_chosen(self, message: SessionList.Chosen) -> None:
        self.dismiss(message.session_id)

    def action_move(self, rows: int) -> None:
        self.query_one(SessionList).move(rows)

    def action_page(self, pages: int) -> None:
        self.query_one(SessionList).page(pages)

    def action_close(self) -> None:
        self.dismiss(None)
