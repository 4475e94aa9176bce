"""Provides ``Answers``: the questions of the workbench's state asked in place, answered through the session.

The state (``WorkbenchState.questions``) holds what a run waits on, oldest first. The plan is a panel beside
(or, under 120 columns, above) the conversation (``PlanPanel``); a permission question is a panel above the
input (``QuestionPanel``), the oldest first with how many wait. The conversation stays on screen behind both.
A question never takes the focus by itself, whatever the timing: it waits, shown with the key that reaches
it, until the person moves the focus there (``ctrl+y``, the ``question`` command, or a click), so keys typed
for the input never answer it and the input's text is never touched. Answers go with
``Session.answer(request_id, …)``; the question closes at once and the focus is back in the input. An
"always" keeps a rule that outlives the call, so the ``a`` key first shows the rule and a second ``a`` keeps
it (``/always``, typed, is answer enough).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.widget import Widget

from chimera.core.errors import ConfigError
from chimera.tui.outside import tell
from chimera.tui.state.questions import Question
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.workbench.focus import move_to

if TYPE_CHECKING:
    from chimera.tui.app import ChimeraApp

__all__ = ["Answers"]


class Answers:
    """The questions a run waits on: shown in their panels, answered by the person."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app

    def commands(self) -> dict[str, object]:
        return {
            "approve": self.approve,
            "edit": self.edit_plan,
            "keep-planning": self.keep_planning,
            "cancel": self.cancel_plan,
            "question": self.go_to_question,
            "allow": lambda: self.answer_permission("allow"),
            "always": self.always,
            "always-rule": self.always_with_rule,
            "deny": lambda: self.answer_permission("deny"),
            "deny-why": self.deny_why,
        }

    @property
    def plan_panel(self) -> PlanPanel:
        return self.app.query_one(PlanPanel)

    @property
    def question_panel(self) -> QuestionPanel:
        return self.app.query_one(QuestionPanel)

    # --- where the questions are drawn ------------------------------------------------------

    def show(self) -> None:
        """Draw the plan and the oldest permission question as the state has them. The focus stays where the
        person put it, unless it was on a question that is gone: then it is back in the input."""
        questions = self.app.state.questions
        for panel in self.app.query(PlanPanel):
            panel.show(waiting=questions.plan is not None)
        permissions = [q for q in questions.open if q.kind == "permission"]
        for question_panel in self.app.query(QuestionPanel):
            question_panel.show(permissions[0] if permissions else None, 1, len(permissions))
        if self._in_a_panel() and not self._still_asked():
            self.app.prompt.focus()

    def _still_asked(self) -> bool:
        """The panel that has the focus still asks something (a plan being carried out asks nothing)."""
        focused = self.app.focused
        questions = self.app.state.questions
        if focused is not None and (focused is self.plan_panel or focused in self.plan_panel.walk_children()):
            return questions.plan is not None
        return any(q.kind == "permission" for q in questions.open)

    def _panel_of(self, question: Question) -> Widget:
        return self.plan_panel if question.kind == "plan" else self.question_panel

    def _in_a_panel(self) -> bool:
        focused = self.app.focused
        panels: list[Widget] = [*self.app.query(PlanPanel), *self.app.query(QuestionPanel)]
        return focused is not None and any(panel is focused or focused in panel.walk_children() for panel in panels)

    def go_to_question(self) -> None:
        """Move the focus to the oldest question (``ctrl+y``): the person's act, the only way a question gets it."""
        first = self.app.state.questions.first
        if first is None:
            return
        panel = self._panel_of(first)
        if self.app.focused is not panel and self.app.focused not in panel.walk_children():
            move_to(panel)

    # --- answers ----------------------------------------------------------------------------

    def answer_plan(self, decision: str, text: str | None = None) -> None:
        """Answer the plan waiting (``approve``, ``edit`` with the text, ``revise`` with what to change, ``cancel``)."""
        question = self.app.state.questions.plan
        if question is None:
            return
        self.app.session.answer(question.request_id, decision, text or None)
        self.app.state.questions.close(question.request_id)
        if decision == "revise":
            tell(self.app, "Sent: the model revises the plan; you answer again.", timeout=4)
        self._after_answer()

    def answer_permission(self, verdict: str, words: str = "") -> bool:
        """Answer the oldest permission question: ``allow``, ``always`` (with ``words``, the rule to keep instead
        of the one shown), ``deny`` (with ``words``, the person's reason). False, said in a line and the question
        still open, when the rule written cannot be kept."""
        question = next((q for q in self.app.state.questions.open if q.kind == "permission"), None)
        if question is None:
            return False
        try:
            self.app.session.answer(question.request_id, verdict, words or None)
        except ConfigError as err:
            tell(self.app, str(err), one_line=True, severity="error", timeout=8)
            return False
        self.app.state.questions.close(question.request_id)
        self._after_answer()
        return True

    def always(self) -> None:
        """Always allow: from the question's own ``a``, first the rule it keeps is shown and a second ``a``
        keeps it; typed (``/always``) or chosen in the palette, it is answer enough."""
        panel = self.question_panel
        if self.app.focused is panel and not panel.confirming_always:
            panel.confirm_always()
            return
        self.answer_permission("always")

    def always_with_rule(self, rule: str = "") -> None:
        """Always allow, keeping ``rule`` (``/always-rule RULE``), or open the rule shown to edit it (``e``)."""
        if rule.strip():
            self.answer_permission("always", rule.strip())
        elif any(q.kind == "permission" for q in self.app.state.questions.open):
            self.go_to_question()
            self.question_panel.edit_rule()

    def deny_why(self, reason: str) -> None:
        """Refuse, telling the model ``reason`` (``/deny-why REASON``), or ask for it in the panel (``d``)."""
        if reason.strip():
            self.answer_permission("deny", reason.strip())
        else:
            self.go_to_question()
            self.question_panel.ask_reason()

    def _after_answer(self) -> None:
        if self._in_a_panel():
            self.app.prompt.focus()
        self.show()

    def leave(self) -> None:
        """``escape`` on a question: back to the input; the question waits, unanswered."""
        self.app.prompt.focus()

    def prefill(self, text: str) -> None:
        """Words put in the input for the person to finish (``/`` on the plan types a command)."""
        self.app.prompt.prefill(text)

    def approve(self) -> None:
        self.plan_panel.approve()  # the edit kept in the panel, when there is one

    def edit_plan(self) -> None:
        """Open the plan waiting for an answer in its editor (``e``, ``/edit``)."""
        if self.app.state.questions.plan is not None:
            self.plan_panel.edit()

    def keep_planning(self, changes: str = "") -> None:
        """Send the plan back with what to change (``/keep-planning CHANGES``), or ask for it (``k``)."""
        if changes.strip():
            self.answer_plan("revise", changes.strip())
        elif self.app.state.questions.plan is not None:
            self.plan_panel.keep_planning()

    def cancel_plan(self) -> None:
        """``c`` on the plan asks once; a typed ``/cancel`` (or the palette's) is answer enough."""
        panel = self.plan_panel
        if self.app.focused is panel:
            panel.cancel()
        else:
            self.answer_plan("cancel")
