"""Provides ``QuestionApp``: the questions of the workbench's state asked in place, answered through the session.

The state (``WorkbenchState.questions``) holds what a run waits on, oldest first. The plan is a panel
beside (or, under 120 columns, above) the conversation (``PlanPanel``); a permission question is a panel
above the input (``QuestionPanel``), the oldest first with how many wait. The conversation stays on
screen and scrollable behind both. A question takes the focus only when the person is not typing: keys
typed in the last second keep it waiting, unfocused, until a second's pause or ``ctrl+y`` (the ``question``
command), so keys meant for the input never answer it, and the input's text is never touched. Answers go
with ``Session.answer(request_id, …)``; the question closes at once, and the focus goes back to the input.
"""

from __future__ import annotations

import time

from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Input

from chimera.core.errors import ConfigError
from chimera.core.sessions.session import Session
from chimera.tui.conversation_app import ConversationApp
from chimera.tui.outside import tell
from chimera.tui.state.questions import Question
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel

__all__ = ["TYPING_PAUSE", "QuestionApp"]

TYPING_PAUSE = 1.0  # seconds without a key in the input before a question takes the focus


class QuestionApp(ConversationApp):
    """A conversation over a live session whose questions are asked in place."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self.last_typed = float("-inf")  # when the input's text last changed (monotonic)
        self._focus_timer: Timer | None = None
        self._asked: str | None = None  # the request id the focus last moved to

    # --- where the questions are drawn ------------------------------------------------------

    def waiting_question(self) -> Question | None:
        """The question to answer next: the oldest open one."""
        return self.state.questions.first

    def show_questions(self) -> None:
        """Draw the plan and the oldest permission question as the state has them; move the focus to the
        oldest question unless the person is typing (then in a second, if they pause)."""
        questions = self.state.questions
        plan_waiting = questions.plan is not None
        for panel in self.query(PlanPanel):
            panel.show(waiting=plan_waiting)
        permissions = [q for q in questions.open if q.kind == "permission"]
        for question_panel in self.query(QuestionPanel):
            question_panel.show(permissions[0] if permissions else None, 1, len(permissions))
        first = questions.first
        if first is None:
            self._asked = None
            if self._in_a_panel():
                self.query_one(PromptInput).focus()
            return
        if first.request_id != self._asked:
            self._offer_focus()

    def _panel_of(self, question: Question) -> Widget:
        return self.query_one(PlanPanel) if question.kind == "plan" else self.query_one(QuestionPanel)

    def _in_a_panel(self) -> bool:
        focused = self.focused
        panels: list[Widget] = [*self.query(PlanPanel), *self.query(QuestionPanel)]
        return focused is not None and any(panel is focused or focused in panel.walk_children() for panel in panels)

    def _offer_focus(self) -> None:
        """The oldest question takes the focus now, or once the person has paused typing for a second."""
        if self._focus_timer is not None:
            self._focus_timer.stop()
            self._focus_timer = None
        first = self.waiting_question()
        if first is None:
            return
        quiet = time.monotonic() - self.last_typed
        if quiet < TYPING_PAUSE:
            self._focus_timer = self.set_timer(TYPING_PAUSE - quiet + 0.01, self._offer_focus)
            return
        self.go_to_question()

    def go_to_question(self) -> None:
        """Move the focus to the oldest question (``ctrl+y``)."""
        first = self.waiting_question()
        if first is None:
            return
        self._asked = first.request_id
        panel = self._panel_of(first)
        if not self._in_a_panel() or self.focused not in panel.walk_children():
            panel.focus()
        if isinstance(panel, QuestionPanel):
            self.call_after_refresh(panel.draw_keys)  # once the focus is there

    def on_input_changed(self, message: Input.Changed) -> None:
        """Typing in the input: a question waits for a pause before it takes the focus."""
        if isinstance(message.input, PromptInput):
            self.last_typed = time.monotonic()

    # --- answers ----------------------------------------------------------------------------

    def answer_plan(self, decision: str, text: str | None = None) -> None:
        """Answer the plan waiting (``approve``, ``edit`` with the text, ``revise`` with what to change, ``cancel``)."""
        question = self.state.questions.plan
        if question is None:
            return
        self.session.answer(question.request_id, decision, text or None)
        self.state.questions.close(question.request_id)
        if decision == "revise":
            tell(self, "Sent: the model revises the plan; you answer again.", timeout=4)
        self._after_answer()

    def answer_permission(self, verdict: str, words: str = "") -> bool:
        """Answer the oldest permission question: ``allow``, ``always`` (with ``words``, the rule to keep instead
        of the one shown), ``deny`` (with ``words``, the person's reason). False, said in a line and the question
        still open, when the rule written cannot be kept."""
        question = next((q for q in self.state.questions.open if q.kind == "permission"), None)
        if question is None:
            return False
        try:
            self.session.answer(question.request_id, verdict, words or None)
        except ConfigError as err:
            tell(self, str(err), one_line=True, severity="error", timeout=8)
            return False
        self.state.questions.close(question.request_id)
        self._after_answer()
        return True

    def always_with_rule(self, rule: str = "") -> None:
        """Always allow, keeping ``rule`` (``/always-rule RULE``), or open the rule shown to edit it (``e``)."""
        if rule.strip():
            self.answer_permission("always", rule.strip())
        elif any(q.kind == "permission" for q in self.state.questions.open):
            self.go_to_question()
            self.query_one(QuestionPanel).edit_rule()

    def _after_answer(self) -> None:
        self._asked = None
        if self._in_a_panel():
            self.query_one(PromptInput).focus()
        self.show_questions()

    def edit_plan(self) -> None:
        """Open the plan waiting for an answer in its editor (``e``, ``/edit``)."""
        if self.state.questions.plan is not None:
            self.query_one(PlanPanel).edit()

    def keep_planning(self, changes: str = "") -> None:
        """Send the plan back with what to change (``/keep-planning CHANGES``), or ask for it (``k``)."""
        if changes.strip():
            self.answer_plan("revise", changes.strip())
        elif self.state.questions.plan is not None:
            self.query_one(PlanPanel).keep_planning()

    def cancel_plan(self) -> None:
        """``c`` on the plan asks once; a typed ``/cancel`` (or the palette's) is answer enough."""
        panel = self.query_one(PlanPanel)
        if self.focused is panel:
            panel.cancel()
        else:
            self.answer_plan("cancel")

    def prefill(self, text: str) -> None:
        """Put ``text`` in the input, the cursor at its end, and the focus there."""
        prompt = self.query_one(PromptInput)
        prompt.value = text
        prompt.focus()

        def at_the_end() -> None:  # after the focus, which selects the whole text: typing goes after it
            prompt.cursor_position = len(prompt.value)

        self.call_after_refresh(at_the_end)
