"""Provides ``QuestionApp``: the questions of the workbench's state on screen, answered through the session.

The state (``WorkbenchState.questions``) holds what a run waits on, oldest first; this layer of the
workbench shows the oldest one as its screen (a permission, a plan), one at a time, and sends the
answer with ``Session.answer(request_id, …)``. A question closed another way (``/approve`` and
``/cancel``, a run that stopped) takes its screen away. A plan put aside (``/`` on its screen) waits
unanswered, unasked, until ``/approve``, ``/edit`` or ``/cancel``.
"""

from __future__ import annotations

from functools import partial

from chimera.core.sessions.session import Session
from chimera.tui.conversation_app import ConversationApp
from chimera.tui.screens.permission import PermissionScreen
from chimera.tui.screens.plan import PlanScreen
from chimera.tui.widgets.prompt_input import PromptInput

__all__ = ["QuestionApp"]

Asking = PermissionScreen | PlanScreen


class QuestionApp(ConversationApp):
    """A conversation over a live session whose questions are asked on screen."""

    def __init__(self, session: Session) -> None:
        super().__init__()
        self.session = session
        self._asking: dict[str, Asking] = {}  # the question on screen, by its request id
        self._aside: set[str] = set()  # plans put aside to type a command: not asked again until one comes

    def show_questions(self) -> None:
        """Ask the oldest open question not put aside, unless one is on screen; a screen whose question
        closed meanwhile goes."""
        questions = self.state.questions
        self._aside &= {q.request_id for q in questions.open}
        for request_id, screen in list(self._asking.items()):
            if request_id not in questions:
                del self._asking[request_id]
                screen.withdraw()
        waiting = [q for q in questions.open if q.request_id not in self._aside]
        if not waiting or self._asking:
            return
        first = waiting[0]
        if first.kind == "permission":
            self._ask(PermissionScreen(first.request_id, first.call_id, first.name, dict(first.args), first.reason))
        else:
            self._ask(PlanScreen(first.request_id, list(first.steps)))

    def _ask(self, screen: Asking) -> None:
        self._asking[screen.request_id] = screen
        self.push_screen(screen, partial(self._answered, screen.request_id))

    def _answered(self, request_id: str, answer: str | tuple[str, str] | None) -> None:
        """A question's screen closed: its answer goes to the session (None: withdrawn, nobody waits)."""
        self._asking.pop(request_id, None)
        decision, plan = (answer, "") if not isinstance(answer, tuple) else answer
        if decision == "aside":
            self._aside.add(request_id)
            self.call_after_refresh(self.prefill, "/")  # once the plan's screen is gone
        elif decision is not None:
            self.session.answer(request_id, decision, plan or None)
            self.state.questions.close(request_id)
        self.call_after_refresh(self.show_questions)  # the next one, once this screen is gone

    def answer_plan(self, decision: str) -> None:
        """Approve or cancel the plan waiting for an answer (``/approve``, ``/cancel``), on screen or aside."""
        question = self.state.questions.plan
        if question is not None:
            self.session.answer(question.request_id, decision)
            self.state.questions.close(question.request_id)
            self.show_questions()  # its screen, if it is up, goes

    def edit_plan(self) -> None:
        """Open the plan waiting for an answer in its editor (``/edit``); ``ctrl+s`` answers with the edit."""
        question = self.state.questions.plan
        if question is None:
            return
        screen = self._asking.get(question.request_id)
        if isinstance(screen, PlanScreen):
            screen.action_edit()
            return
        self._aside.discard(question.request_id)
        if not self._asking:
            self._ask(PlanScreen(question.request_id, list(question.steps), editing=True))

    def prefill(self, text: str) -> None:
        """Put ``text`` in the input, the cursor at its end, and the focus there."""
        prompt = self.query_one(PromptInput)
        prompt.value = text
        prompt.cursor_position = len(text)
        prompt.focus()
