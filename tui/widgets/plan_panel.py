"""Provides ``PlanPanel``: the plan beside (or above) the conversation, a view of ``WorkbenchState.plan``.

While a plan waits for its answer the panel shows its steps (what a revision changed marked: ``+`` added,
``~`` changed, removed ones struck) and the keys that answer it, which are the registry's (``tui.commands``,
scope ``plan``): ``a`` approve, ``e`` edit, ``k`` keep planning, ``c`` cancel. Editing swaps the steps for a
Markdown text area: ``ctrl+s`` uses the edit, ``escape`` leaves the editor and keeps the edit (``a`` then
approves the edited plan). Keep planning asks what to change in one line (``enter`` sends it: the model
revises the plan). Cancel asks once ("Cancel the plan? y/n"). While the plan is carried out the steps tick
off live, the current one is marked and a failed check says why; once the plan is over the panel folds to
one line (class ``-over``: above the conversation, which has the whole width again). The panel never changes
the state: it asks the app (:class:`PlanHost`) to answer.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from rich.console import RenderableType
from rich.style import Style
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Input, Static

from chimera.core.loops.plans import parse_checklist
from chimera.core.terminal_text import terminal_safe
from chimera.tui.command_views import CommandKeys, command_bindings
from chimera.tui.inline_markdown import inline_markdown
from chimera.tui.look import BOLD, Look, look_of
from chimera.tui.outside import tell
from chimera.tui.state.plan import PlanState
from chimera.tui.workbench.focus import move_to

__all__ = ["PlanHost", "PlanPanel"]

_MARK = {"added": "+ ", "changed": "~ ", "": ""}


class PlanHost(Protocol):
    """What the panel asks of the app."""

    def answer_plan(self, decision: str, text: str | None = None) -> None: ...

    def prefill(self, text: str) -> None: ...

    def leave(self) -> None: ...


class PlanPanel(CommandKeys, Vertical, can_focus=True):
    """The plan, its answers and its progress."""

    DEFAULT_CSS = """
    PlanPanel {
        height: auto;
        max-height: 50%;
        padding: 0 1;
        border-left: thick $accent;
        background: $surface;
        display: none;
    }
    PlanPanel.-shown { display: block; }
    PlanPanel:focus { border-left: thick $primary; background: $boost; }
    PlanPanel #plan-steps { height: auto; }
    PlanPanel #plan-editor { height: 8; }
    PlanPanel #plan-keys { color: $text-muted; }
    PlanPanel #plan-feedback { height: 3; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *command_bindings("plan"),
        Binding("y", "confirm(True)", "Yes", show=False, priority=True),
        Binding("n", "confirm(False)", "No", show=False, priority=True),
        Binding("slash", "aside", "Type a command", show=False, priority=True),
        Binding("escape", "leave", "Back to the input", show=False, priority=True),
        Binding("ctrl+s", "save", "Use the edited plan", show=False, priority=True),
    ]
    keys_within = frozenset({"save"})  # ctrl+s acts from the editor

    def __init__(self, plan: PlanState, host: PlanHost, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.plan = plan
        self.host = host
        self.draft = ""  # an edit kept (escape left the editor): the plan answered by ``a``
        self.confirming = False  # "Cancel the plan? y/n" is asked
        self.waiting = False  # the plan waits for an answer
        self._drawn: tuple[object, ...] = ()  # what the last draw showed
        self.mode = ""  # "editing" (the Markdown editor is open), "feedback" (what to change is asked) or ""

    @property
    def editing(self) -> bool:
        return self.mode == "editing"

    @property
    def asking_feedback(self) -> bool:
        return self.mode == "feedback"

    def compose(self) -> ComposeResult:
        yield Static(id="plan-title", markup=False)
        yield Static(id="plan-keys", markup=False)  # under the title: on screen however long the plan, even at 80x24
        yield Static(id="plan-steps", markup=False)

    def show(self, *, waiting: bool) -> None:
        """Draw the plan as the state has it now (``waiting``: it waits for the person's answer)."""
        if self.waiting and not waiting:  # answered, or withdrawn: nothing half-typed stays
            self._close_inputs()
            self.draft, self.confirming = "", False
        self.waiting = waiting
        plan = self.plan
        drawn = (
            plan.phase,
            tuple(plan.steps),
            tuple(plan.checks),
            tuple(plan.failures.items()),
            tuple(plan.changes),
            tuple(plan.removed),
            plan.why_replanned,
            waiting,
            self.draft,
            self.confirming,
            self.mode,
            self.app.current_theme.name,
        )
        if drawn == self._drawn:  # nothing it shows changed (most batches of a run): no redraw, no layout
            return
        self._drawn = drawn
        self.set_class(plan.phase != "none", "-shown")
        if plan.phase == "none":
            return
        look = look_of(self.app.current_theme)
        folded = plan.phase in {"over", "cancelled"}
        self.set_class(folded, "-over")  # one line, above the conversation at any width (app.tcss)
        self.query_one("#plan-title", Static).update(self._title(look))
        steps = self.query_one("#plan-steps", Static)
        steps.display = not folded and not self.editing
        if steps.display:
            steps.update(self._steps(look))
        self.query_one("#plan-keys", Static).update(self._keys() if not folded else "")
        self.query_one("#plan-keys", Static).display = not folded

    def _title(self, look: Look) -> Text:
        plan, count = self.plan, len(self.plan.steps)
        match plan.phase:
            case "proposed":
                what = "The plan, revised" if any(plan.changes) or plan.removed else "The plan"
                title = Text(f"{what} ({count} steps): approve it?", BOLD)
            case "working":
                title = Text(f"The plan: {plan.done} of {count} done", BOLD)
            case "cancelled":
                title = Text("The plan was cancelled", look["muted"])
            case _:
                ended = "done" if plan.done == count else f"ended: {plan.done} of {count} done"
                title = Text(f"{'✓' if plan.done == count else '•'} The plan ({count} steps) {ended}", look["muted"])
        if plan.why_replanned and plan.phase == "working":
            title.append(f"\nRe-planned: {terminal_safe(plan.why_replanned, one_line=True)}", look["notice_warning"])
        return title

    def _steps(self, look: Look) -> Text:
        plan = self.plan
        if self.draft and self.waiting:  # the edit kept: what ``a`` answers with
            edited = parse_checklist(self.draft)
            steps = list(edited.steps) if edited is not None else [self.draft.strip()]
            return Text("\n").join(
                Text.assemble(("~ ", look["diff_added"]), f"☐ {i}. ", inline_markdown(step, look))
                for i, step in enumerate(steps, 1)
            )
        lines: list[Text] = []
        for i, step in enumerate(plan.steps):
            check = plan.checks[i] if i < len(plan.checks) else None
            if check is True:
                mark, style = "☑ ", look["plan_checked"]
            elif i == plan.current:  # worked on: for the first time, or again after a failed check (said below)
                mark, style = "▶ ", look["marker"] + BOLD
            elif check is False:
                mark, style = "☒ ", look["plan_failed"]
            else:
                mark, style = "☐ ", Style.null()
            line = Text.assemble((_MARK[plan.changes[i] if i < len(plan.changes) else ""], look["diff_added"]))
            line.append(mark, style)
            line.append(f"{i + 1}. ")
            line.append_text(inline_markdown(step, look))
            if check is False:
                line.append(f"\n     ✗ {terminal_safe(plan.failures.get(i, ''), one_line=True)}", look["plan_failed"])
            lines.append(line)
        for step in plan.removed:
            lines.append(Text(f"- {terminal_safe(step, one_line=True)}", look["diff_removed"] + Style(strike=True)))
        return Text("\n").join(lines)

    def _keys(self) -> RenderableType:
        if not self.waiting:
            return "esc interrupts the run"
        if self.confirming:
            return Text("Cancel the plan? y/n", BOLD)
        if self.editing:
            return "ctrl+s uses this plan · esc leaves the editor and keeps the edit"
        if self.asking_feedback:
            return "enter asks the model to revise the plan · esc goes back"
        edited = "a approves your edit" if self.draft else "a approve"
        return f"{edited} · e edit · k keep planning · c cancel · / command"

    # --- the answers -----------------------------------------------------------------------

    def approve(self) -> None:
        """``a``: the plan as shown (the kept edit, when there is one)."""
        if self.draft:
            self.host.answer_plan("edit", self.draft)
        else:
            self.host.answer_plan("approve")

    def edit(self) -> None:
        """Swap the steps for the plan as Markdown (the kept edit, when there is one)."""
        if self.editing:
            return
        from textual.widgets import TextArea  # ~10 ms to import: with the first edit, not before the first frame

        self._close_inputs()
        text = self.draft or "\n".join(f"- [ ] {step}" for step in self.plan.steps)
        editor = TextArea(text, id="plan-editor", soft_wrap=True)
        self.mode = "editing"
        self.mount(editor, after="#plan-keys")
        self.show(waiting=self.waiting)
        move_to(editor)  # at once: the words typed in the same instant as the e are the editor's

    def keep_planning(self) -> None:
        """Ask what to change, in one line under the plan."""
        if self.asking_feedback:
            return
        self._close_inputs()
        feedback = Input(placeholder="What should change? The model revises the plan.", id="plan-feedback")
        self.mode = "feedback"
        self.mount(feedback, after="#plan-keys")
        self.show(waiting=self.waiting)
        move_to(feedback)  # at once: what to change typed in the same instant as the k is the line's

    def cancel(self) -> None:
        """Ask once: "Cancel the plan? y/n"."""
        self._close_inputs()
        self.confirming = True
        self.show(waiting=self.waiting)
        move_to(self)

    def action_confirm(self, yes: bool) -> None:
        if not self.confirming:
            return
        self.confirming = False
        if yes:
            self.host.answer_plan("cancel")
        else:
            self.show(waiting=self.waiting)

    def action_aside(self) -> None:
        """``/``: type a command in the input; the plan stays, unanswered."""
        self.host.prefill("/")

    def action_save(self) -> None:
        """``ctrl+s`` in the editor: the edit is the plan."""
        from textual.widgets import TextArea  # (imported with the editor)

        editors = self.query("#plan-editor")
        if not editors or not self.editing:
            return
        text = editors.first(TextArea).text
        if not text.strip():
            tell(self, "An empty plan cannot run: write the steps, or cancel.", severity="warning")
            return
        self.draft = text
        self.host.answer_plan("edit", text)

    def on_key(self, event: object) -> None:
        """``escape`` in the editor or the feedback line leaves it (an edit is kept), never the plan; on the plan
        itself, the focus goes back to the input and the plan waits."""
        from textual.events import Key

        if not isinstance(event, Key) or event.key != "escape":
            return
        if self.editing:
            from textual.widgets import TextArea  # (imported with the editor)

            text = self.query_one("#plan-editor", TextArea).text
            self.draft = text if text.strip() else self.draft
            if self.draft:
                tell(self, "Edit kept: a approves the edited plan, e edits it again.", timeout=4)
        elif not self.asking_feedback and not self.confirming:  # the plan itself: back to the input, it waits
            event.stop()
            event.prevent_default()
            self.host.leave()
            return
        event.stop()
        event.prevent_default()
        self.confirming = False
        self._close_inputs()
        self.show(waiting=self.waiting)
        move_to(self)

    def action_leave(self) -> None:
        """``escape`` on the plan itself: a cancel asked is put away; else the focus goes back to the input and
        the plan waits. (In the editor or the feedback line, escape is theirs: ``on_key``.)"""
        if self.confirming:
            self.confirming = False
            self.show(waiting=self.waiting)
            return
        self.host.leave()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id != "plan-feedback":
            return
        message.stop()
        words = message.value.strip()
        if words:
            self.host.answer_plan("revise", words)

    def _close_inputs(self) -> None:
        self.mode = ""
        for widget in [*self.query("#plan-editor"), *self.query("#plan-feedback")]:
            widget.remove()
        steps = self.query("#plan-steps")
        if steps:
            steps.first().display = True
