"""Provides ``PlanScreen``: the proposed plan as a checklist, to approve, edit or cancel.

The core's ``plan_proposed`` event carries the steps and a request id. This
screen is dismissed with ``("approve", "")``, ``("edit", text)`` (the edited
checklist becomes the plan) or ``("cancel", "")``, and the app sends that answer
to the core with the request id. Editing swaps the checklist for a text area
holding it as Markdown; ``ctrl+s`` takes the edit. ``/`` puts the plan aside,
unanswered (``("aside", "")``), to type a command (``/approve``, ``/edit``,
``/cancel``) in the input. When the run stops while the plan is open, the app
closes the screen with :meth:`withdraw`.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static, TextArea

from chimera.core.terminal_text import terminal_safe

__all__ = ["PlanScreen"]


class PlanScreen(ModalScreen[tuple[str, str] | None]):
    """Approve, edit or cancel a proposed plan."""

    DEFAULT_CSS = """
    PlanScreen {
        align: center middle;
    }
    PlanScreen > Vertical {
        width: 100;
        max-width: 95%;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        border: thick $accent;
        background: $surface;
    }
    PlanScreen #plan-title {
        text-style: bold;
        margin-bottom: 1;
    }
    PlanScreen #plan-steps {
        height: auto;
        max-height: 20;
        margin-bottom: 1;
    }
    PlanScreen #plan-editor {
        height: 14;
        margin-bottom: 1;
    }
    PlanScreen Horizontal {
        height: auto;
    }
    PlanScreen Button {
        margin-right: 2;
    }
    PlanScreen #plan-keys {
        color: $text-muted;
        margin-top: 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "approve", "Approve"),
        Binding("e", "edit", "Edit"),
        Binding("c,escape", "cancel", "Cancel"),
        Binding("ctrl+s", "save", "Use the edited plan", show=False),
        Binding("slash", "aside", "Type a command", show=False),
    ]

    def __init__(self, request_id: str, steps: list[str], *, editing: bool = False) -> None:
        super().__init__()
        self.request_id = request_id
        self.steps = steps
        self.editing = editing  # opens in the editor

    @property
    def checklist(self) -> str:
        return "\n".join(f"- [ ] {step}" for step in self.steps)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(f"The plan ({len(self.steps)} steps)", id="plan-title")
            with VerticalScroll(id="plan-steps"):
                for number, step in enumerate(self.steps, 1):
                    yield Static(Text(f"☐ {number}. {terminal_safe(step, one_line=True)}"), classes="plan-step")
            with Horizontal():
                yield Button("Approve (a)", id="approve", variant="success")
                yield Button("Edit (e)", id="edit", variant="primary")
                yield Button("Cancel (c)", id="cancel", variant="error")
            yield Static("/ types a command instead: /approve, /edit, /cancel", id="plan-keys")

    def on_mount(self) -> None:
        if self.editing:
            self.action_edit()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        match event.button.id:
            case "approve":
                self.action_approve()
            case "edit" if self.query("#plan-editor"):
                self.action_save()
            case "edit":
                self.action_edit()
            case _:
                self.action_cancel()

    def action_approve(self) -> None:
        if not self.query("#plan-editor"):
            self.dismiss(("approve", ""))

    def action_cancel(self) -> None:
        self.dismiss(("cancel", ""))

    def action_aside(self) -> None:
        """Leave the plan unanswered for now: the app puts a ``/`` in the input to type a command."""
        if not self.query("#plan-editor"):
            self.dismiss(("aside", ""))

    def action_edit(self) -> None:
        """Swap the checklist for a text area holding it; ``ctrl+s`` (or Use this plan) takes the edit."""
        if self.query("#plan-editor"):
            return
        self.query_one("#plan-steps").remove()
        editor = TextArea(self.checklist, id="plan-editor")
        self.query_one(Vertical).mount(editor, after="#plan-title")
        self.query_one("#approve", Button).remove()
        self.query_one("#edit", Button).label = "Use this plan (ctrl+s)"
        editor.focus()

    def action_save(self) -> None:
        editors = self.query("#plan-editor")
        if editors:
            text = editors.first(TextArea).text
            if text.strip():
                self.dismiss(("edit", text))
            else:
                self.notify("An empty plan cannot run: write the steps, or cancel.", severity="warning")

    def withdraw(self) -> None:
        """The run stopped while the plan was open: close without an answer."""
        if self.is_attached:
            self.dismiss(None)
