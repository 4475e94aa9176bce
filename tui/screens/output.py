"""Provides ``OutputScreen``: the whole saved output of a call whose result was cut, to scroll through.

A result too long for the model keeps its head and tail and saves the rest to
a file of the session's own (``full_output`` in the call's data). ``o`` on the
call opens this screen over the conversation; ``escape`` or ``q`` closes it.
"""

from __future__ import annotations

import stat
from pathlib import Path
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import ModalScreen
from textual.widgets import Static

from chimera.core.terminal_text import terminal_safe
from chimera.tui.widgets.saved_output_view import SavedOutputView

__all__ = ["OutputScreen", "saved_output"]


class OutputScreen(ModalScreen[None]):
    """One call's saved output, full screen, scrollable."""

    DEFAULT_CSS = """
    OutputScreen {
        background: $background;
    }
    OutputScreen #output-title {
        height: 1;
        padding: 0 1;
        background: $panel;
        text-style: bold;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    OutputScreen #output-path {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    OutputScreen #output-keys {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    """

    PLACE = "output"  # in the focus model (``tui.workbench.focus``)
    AUTO_FOCUS = "#output"

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q", "close", "Close", priority=True)]  # (as the help's)

    def __init__(self, title: str, path: Path) -> None:
        super().__init__()
        self.heading = title
        self.path = path

    def compose(self) -> ComposeResult:
        yield Static(terminal_safe(self.heading, one_line=True), id="output-title", markup=False)
        yield Static(terminal_safe(f"saved in {_shortened(self.path)}", one_line=True), id="output-path", markup=False)
        yield SavedOutputView(self.path, id="output")
        yield Static("escape closes · ↑↓ PgUp PgDn Home End scroll", id="output-keys", markup=False)

    def action_close(self) -> None:
        self.dismiss(None)


def _shortened(path: Path) -> str:
    """``path`` as a person writes it: under their home folder, from ``~``."""
    try:
        return f"~/{path.relative_to(Path.home())}"
    except (ValueError, RuntimeError):  # elsewhere, or no home folder known
        return str(path)


def saved_output(path: Path, folder: Path | None) -> tuple[Path, str]:
    """``path`` checked before it is shown: a regular file inside ``folder`` (the session's own output
    folder). A session file can be crafted, so a path it names is never simply opened: a link (in a loop
    or not), a name no file can have (a NUL in it), a folder, anything outside is refused. Returns the
    path and, when it may not be shown, why (one line)."""
    if folder is None:
        return path, "The saved output is not kept after a replay: open the session itself to see it."
    shown = terminal_safe(str(path), one_line=True)
    refused = f"Not opened: {shown} is not a file in this session's output folder."
    try:
        info = path.lstat()
    except FileNotFoundError:
        return path, f"The saved output is gone: {shown} no longer exists."
    except (OSError, ValueError):  # a folder on the way that loops or is not one; a NUL in the name
        return path, refused
    if not stat.S_ISREG(info.st_mode):
        return path, refused
    try:
        inside = path.resolve(strict=True).is_relative_to(folder.resolve())
    except FileNotFoundError:
        return path, f"The saved output is gone: {shown} no longer exists."
    except (OSError, RuntimeError):  # a link loop on the way (RuntimeError before Python 3.13)
        return path, refused
    return (path, "") if inside else (path, refused)
