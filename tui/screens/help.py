"""Provides ``HelpScreen``: the keys and commands that work now, over the conversation.

``?``, ``F1`` and ``/help`` open it. The app hands it its rows, built from the command registry
(``tui.commands.available``: only what works now), the input's own keys and the timeline's bindings;
``escape``, ``q``, ``?`` or ``F1`` close it. Every row is drawn as its characters (``outside.literal``): the MCP
servers' rows hold their names, which a config or a workspace's ``.mcp.json`` wrote.
"""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from chimera.tui.outside import literal
from chimera.tui.workbench.focus import key_line, place_named

__all__ = ["HelpScreen", "Row"]

Row = tuple[str, str, str]  # keys, command (or "" when it has none), what it does


class HelpScreen(ModalScreen[None]):
    """A table of keys and commands, in sections."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > Vertical {
        width: 100;
        max-width: 95%;
        height: auto;
        max-height: 95%;
        padding: 0 1;
        border: thick $accent;
        background: $surface;
    }
    HelpScreen #help-title {
        dock: top;
        text-style: bold;
    }
    HelpScreen #help-body {
        height: auto;
        max-height: 75vh;  /* the box's 95% less its border, title and last line: scrolls when taller */
    }
    HelpScreen #help-keys {
        dock: bottom;
        color: $text-muted;
    }
    HelpScreen .help-section {
        text-style: italic;
        color: $text-muted;
        margin-top: 1;
    }
    HelpScreen .help-rows {
        layout: grid;
        grid-size: 3;
        grid-columns: auto auto 1fr;
        grid-gutter: 0 2;
        height: auto;
    }
    HelpScreen .help-rows > .help-key {
        text-style: bold;
    }
    """

    PLACE = "help"  # in the focus model (``tui.workbench.focus``)
    AUTO_FOCUS = "#help-body"  # the arrows and page keys scroll it

    # Priority: the app closes it before it hands on the next key, so words typed in the same instant as the
    # escape are the input's (``tui.workbench.focus``).
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark,f1", "close", "Close", priority=True)]

    def __init__(self, sections: list[tuple[str, list[Row]]]) -> None:
        super().__init__()
        self.sections = sections

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Keys and commands that work now", id="help-title", markup=False)
            with VerticalScroll(id="help-body"):
                for title, rows in self.sections:
                    if rows:
                        yield Static(title, classes="help-section", markup=False)
                        with Grid(classes="help-rows"):
                            for keys, command, what in rows:  # (an MCP server's name is outside text)
                                yield Static(literal(keys, one_line=True), classes="help-key", markup=False)
                                yield Static(literal(command, one_line=True), classes="help-command", markup=False)
                                yield Static(literal(what, one_line=True), classes="help-what", markup=False)
            yield Static(key_line(place_named("help").keys), id="help-keys", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)
