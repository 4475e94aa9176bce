"""Provides ``PermissionScreen``: asks the person whether a tool call may run.

The core's ``permission_requested`` event names the call, its request id and,
when the question is not a plain one, the reason it is asked (shown under the
title: a command that hides what it runs, a change inside ``.git``). This
screen is dismissed with ``"allow"``, ``"always"`` (allow, and do not ask
again for this command, or for edits: ``write`` and ``edit`` both) or ``"deny"``, and the app sends that
answer to the core with the request id. When the run stops meanwhile, the app
closes the screen with :meth:`withdraw`: there is nothing left to answer. The
call is the model's: it is shown with every character that could steer the
terminal, or hide part of the command (a carriage return, a bidi override), as
an escape.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.syntax import Syntax
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.base import describe_call
from chimera.tui.look import look_of

__all__ = ["PermissionScreen"]


class PermissionScreen(ModalScreen[str]):
    """Allow, always allow, or deny one tool call."""

    DEFAULT_CSS = """
    PermissionScreen {
        align: center middle;
    }
    PermissionScreen > Vertical {
        width: 90;
        max-width: 95%;
        height: auto;
        padding: 1 2;
        border: thick $warning;
        background: $surface;
    }
    PermissionScreen #permission-title {
        text-style: bold;
        margin-bottom: 1;
    }
    PermissionScreen #permission-reason {
        margin-bottom: 1;
    }
    PermissionScreen #permission-detail {
        max-height: 16;
        margin-bottom: 1;
    }
    PermissionScreen Horizontal {
        height: auto;
    }
    PermissionScreen Button {
        margin-right: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer('allow')", "Allow"),
        Binding("a", "answer('always')", "Always"),
        Binding("n,escape", "answer('deny')", "Deny"),
    ]

    def __init__(self, request_id: str, call_id: str, name: str, args: dict[str, Any], reason: str = "") -> None:
        super().__init__()
        self.request_id = request_id
        self.call_id = call_id
        self.tool_name = name
        self.args = args
        self.reason = reason

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(f"Allow {terminal_safe(self.tool_name, one_line=True)}?"), id="permission-title")
            if self.reason:
                reason = terminal_safe(self.reason, one_line=True)
                yield Static(Text(f"Asked because {reason}.", style="italic"), id="permission-reason")
            yield Static(self._detail(), id="permission-detail")
            with Horizontal():
                yield Button("Allow (y)", id="allow", variant="success")
                yield Button(self._always_label(), id="always", variant="primary")
                yield Button("Deny (n)", id="deny", variant="error")

    def _detail(self) -> Syntax | Text:
        def shown(key: str, *, one_line: bool = False) -> str:
            return terminal_safe(str(self.args.get(key, "")), one_line=one_line)

        look = look_of(self.app.current_theme)  # the command and the change in the theme's colours
        if self.tool_name == "bash":
            return Syntax(shown("command"), "bash", theme=look.syntax, word_wrap=True)
        if self.tool_name == "write":
            lines = shown("content").splitlines()
            preview = "\n".join(lines[:12]) + (f"\n… {len(lines) - 12} more lines" if len(lines) > 12 else "")
            return Text.assemble((f"{shown('path', one_line=True)}\n", "bold"), preview)
        if self.tool_name == "edit":
            return Text.assemble(
                (f"{shown('path', one_line=True)}\n", "bold"),
                ("- " + shown("old").replace("\n", "\n- ") + "\n", look["diff_removed"]),
                ("+ " + shown("new").replace("\n", "\n+ "), look["diff_added"]),
            )
        return Text(terminal_safe(describe_call(self.tool_name, self.args), one_line=True))

    def _always_label(self) -> str:
        """What "always" covers, as the policy remembers it (``PermissionPolicy.remembering``): this exact
        command; for ``write`` and ``edit`` every edit by either tool, or, asked about for a reason (a file
        inside .git), edits to that file only; for any other tool, its every call."""
        if self.tool_name == "bash":
            what = "this command"
        elif self.tool_name in ("write", "edit"):
            what = "edits to this file" if self.reason else "edits"
        else:
            what = f"every {terminal_safe(self.tool_name, one_line=True)} call"
        return f"Always allow {what} (a)"

    def withdraw(self) -> None:
        """The run stopped while the question was open: close without an answer."""
        if self.is_attached:
            self.dismiss(None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(event.button.id or "deny")

    def action_answer(self, verdict: str) -> None:
        self.dismiss(verdict)
