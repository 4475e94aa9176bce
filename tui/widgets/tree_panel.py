"""Provides ``TreePanel``: the session's tree beside the conversation (over it when narrow), and its moves.

The lines are a :class:`TreeView`; under them the preview of what a switch to the selected line would do
(the app works it out off the screen's thread and gives it to :meth:`TreePanel.show_preview`), and one
line for a question or for what is typed. Keys: ``up``/``down`` (``k``/``j``), ``pageup``/``pagedown``,
``home``/``end`` move; ``space`` (or ``left``/``right``) folds; ``f`` goes through the filters (all, the
person's turns, named); ``/`` searches as you type; ``enter`` switches there after a ``y``; ``b`` branches
there (the files as they are); a switch's question may offer ``s`` (switch and summarize the branch left
behind, or not, when that is the default); ``c`` names a checkpoint there, ``l`` a label; ``u`` goes back to where the
leaf was before the last move; ``escape`` leaves what is typed, or the panel. The panel changes nothing
itself: it asks the app (:class:`TreeHost`).

Its keys are the app's to run before it hands on the next one (priority bindings, each taken only while the
panel itself, not its line, has the focus), and the focus moves at once (``move_to``): keys typed in the
same instant as ``/`` or a switch's ``y`` reach where that key put the focus, never the panel's other keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Protocol

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from chimera.core.sessions.tree_lines import FILTERS, TreeLines
from chimera.core.terminal_text import terminal_safe
from chimera.tui.widgets.tree_view import TreeView
from chimera.tui.workbench.focus import move_to

__all__ = ["TreeHost", "TreePanel"]

_FILTER_NAMES = {"all": "all", "turns": "your turns", "named": "named"}
_KEYS = "enter switch · b branch · c checkpoint · l label · u back · / search · f filter · space fold"
_ASKS = {"search": "/", "checkpoint": "Checkpoint name: ", "label": "Label: "}
# The panel's actions whose keys the line under it takes while it has the focus (words, enter, the cursor's
# keys): up/down and the page keys still move the tree's cursor there, and escape leaves the line.
_THE_LINES_KEYS = {"ends", "fold", "filter", "ask", "switch", "branch", "back", "answer", "other"}


class TreeHost(Protocol):
    """What the panel asks of the app."""

    def tree_selected(self, node: str) -> None: ...

    def tree_switch(self, node: str) -> None: ...

    def tree_branch(self, node: str) -> None: ...

    def tree_name(self, node: str, name: str, *, checkpoint: bool) -> None: ...

    def tree_back(self) -> None: ...


class TreePanel(Vertical, can_focus=True):
    """The tree, the preview of a move, and the question or words a move needs."""

    DEFAULT_CSS = """
    TreePanel {
        padding: 0 1;
        border-left: thick $accent;
        background: $surface;
        display: none;
    }
    TreePanel.-shown { display: block; }
    TreePanel:focus-within { border-left: thick $primary; }
    TreePanel #tree-title { height: 1; }
    TreePanel #tree-keys { color: $text-muted; height: auto; }
    TreePanel #tree-preview { height: auto; max-height: 8; color: $text; }
    TreePanel #tree-ask { height: auto; color: $warning; }
    TreePanel #tree-input { display: none; height: 1; border: none; padding: 0; }
    TreePanel #tree-input.-shown { display: block; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up,k", "move(-1)", "Up", show=False, priority=True),
        Binding("down,j", "move(1)", "Down", show=False, priority=True),
        Binding("pageup", "page(-1)", "Page up", show=False, priority=True),
        Binding("pagedown", "page(1)", "Page down", show=False, priority=True),
        Binding("home", "ends(0)", "First", show=False, priority=True),
        Binding("end", "ends(1)", "Last", show=False, priority=True),
        Binding("space,left,right", "fold", "Fold", show=False, priority=True),
        Binding("f", "filter", "Filter", show=False, priority=True),
        Binding("slash", "ask('search')", "Search", show=False, priority=True),
        Binding("enter", "switch", "Switch here", show=False, priority=True),
        Binding("b", "branch", "Branch here", show=False, priority=True),
        Binding("c", "ask('checkpoint')", "Checkpoint", show=False, priority=True),
        Binding("l", "ask('label')", "Label", show=False, priority=True),
        Binding("u", "back", "Back", show=False, priority=True),
        Binding("y", "answer(True)", "Yes", show=False, priority=True),
        Binding("n", "answer(False)", "No", show=False, priority=True),
        Binding("s", "other", "The other answer", show=False, priority=True),
        Binding("escape", "leave", "Leave", show=False, priority=True),
    ]

    def __init__(self, host: TreeHost, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.host = host
        self.asking: tuple[str, Callable[[], object]] | None = None  # a question waiting for y/n, and its yes
        self.other: tuple[str, Callable[[], object]] | None = None  # what s answers instead, when offered
        self.typing = ""  # "search", "checkpoint", "label" or ""
        self.notice: str | None = None

    @property
    def view(self) -> TreeView:
        return self.query_one(TreeView)

    def compose(self) -> ComposeResult:
        yield Static(id="tree-title", markup=False)
        yield Static(_KEYS, id="tree-keys", markup=False)
        yield TreeView(id="tree-lines")
        yield Static(id="tree-ask", markup=False)
        yield Static(id="tree-preview", markup=False)
        yield Input(id="tree-input")

    # --- what it shows --------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """A key of the panel's own works while the panel has the focus; with its line's, the line's keys are
        the line's (handed on to it)."""
        return action not in _THE_LINES_KEYS or self.app.focused is self

    def show_model(self, model: TreeLines, *, at: str | None = None) -> None:
        """Draw the tree of ``model``; the cursor on node ``at`` (the leaf's when None)."""
        self.notice = model.notice
        self.view.show_model(model, at=at)
        self._title()
        self._selected()

    def show_preview(self, node: str, text: str) -> None:
        """What a switch to ``node`` would do (shown while ``node`` is still the one selected)."""
        line = self.view.selected
        if line is not None and line.node == node:
            self.query_one("#tree-preview", Static).update(text)

    def ask(
        self, question: str, on_yes: Callable[[], object], *, other: tuple[str, Callable[[], object]] | None = None
    ) -> None:
        """Ask ``question`` (y/n) in the panel; ``on_yes`` runs on a ``y``. ``other``: what ``s`` does instead
        (its words, shown after the question, and what it runs)."""
        self.asking = (question, on_yes)
        self.other = other
        offer = f" · s {other[0]}" if other is not None else ""
        self.query_one("#tree-ask", Static).update(terminal_safe(f"{question} y/n{offer}", one_line=True))
        move_to(self)

    def _title(self) -> None:
        view = self.view
        count = len(view.shown)
        what = _FILTER_NAMES[view.view] + (f", holding {view.search_text!r}" if view.search_text else "")
        self.query_one("#tree-title", Static).update(
            terminal_safe(f"Session tree · {count} line{'s' if count != 1 else ''} · {what}", one_line=True)
        )

    def _selected(self) -> None:
        line = self.view.selected
        self.query_one("#tree-preview", Static).update("" if line is None else "…")
        if line is not None:
            self.host.tree_selected(line.node)

    # --- keys -----------------------------------------------------------------------------

    def action_move(self, step: int) -> None:
        self.view.move(step)
        self._selected()

    def action_page(self, direction: int) -> None:
        self.action_move(direction * max(1, self.view.size.height - 1))

    def action_ends(self, last: int) -> None:
        self.view.go_to(len(self.view.shown) - 1 if last else 0)
        self._selected()

    def action_fold(self) -> None:
        self.view.fold()
        self._title()

    def action_filter(self) -> None:
        view = self.view
        view.set_view(FILTERS[(FILTERS.index(view.view) + 1) % len(FILTERS)])
        self._title()
        self._selected()

    def action_switch(self) -> None:
        line = self.view.selected
        if line is not None:
            self.host.tree_switch(line.node)

    def action_branch(self) -> None:
        line = self.view.selected
        if line is not None:
            self.host.tree_branch(line.node)

    def action_back(self) -> None:
        self.host.tree_back()

    def action_answer(self, yes: bool) -> None:
        asking, self.asking, self.other = self.asking, None, None
        self.query_one("#tree-ask", Static).update("")
        if asking is not None and yes:
            asking[1]()

    def action_other(self) -> None:
        """``s``: the other answer the question offers (switch and summarize what is left behind)."""
        other = self.other
        if self.asking is None or other is None:
            return
        self.asking = self.other = None
        self.query_one("#tree-ask", Static).update("")
        other[1]()

    def action_ask(self, what: str) -> None:
        """Type words in the panel's line: a search (as you type), a checkpoint's name or a label."""
        field = self.query_one("#tree-input", Input)
        self.typing = what
        field.placeholder = _ASKS[what]
        field.value = self.view.search_text if what == "search" else ""
        field.add_class("-shown")
        move_to(field)

    async def action_leave(self) -> None:
        """Leave what is typed (a search left clears), the question asked, or else the panel."""
        if self.typing:
            if self.typing == "search":
                self.view.search("")
                self._title()
            self._close_input()
            return
        if self.asking is not None:
            self.action_answer(False)
            return
        await self.app.run_action("command('tree')")

    def _close_input(self) -> None:
        field = self.query_one("#tree-input", Input)
        field.remove_class("-shown")
        self.typing = ""
        move_to(self)

    def on_input_changed(self, message: Input.Changed) -> None:
        message.stop()
        if self.typing == "search":
            self.view.search(message.value)
            self._title()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        message.stop()
        typing, words = self.typing, message.value.strip()
        self._close_input()
        line = self.view.selected
        if typing in {"checkpoint", "label"} and words and line is not None:
            self.host.tree_name(line.node, words, checkpoint=typing == "checkpoint")
        elif typing == "search":
            self._selected()
