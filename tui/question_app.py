"""Provides ``QuestionApp``: the questions of the workbench's state on screen, answered through the session.

The state (``WorkbenchState.questions``) holds what a run waits on, oldest first; this layer of the
workbench shows the oldest one as its screen (a permission, a plan), one at a time, and sends the
answer with ``Session.answer(request_id, …)``. A question closed another way (a run that stopped)
takes its screen away.
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

    def show_questions(self) -> None:
        """Ask the oldest open question, unless one is on screen; a screen whose question closed meanwhile goes."""
        questions = self.state.questions
        for request_id, screen in list(self._asking.items()):
            if request_id not in questions:
                del self._asking[request_id]
                screen.withdraw()
        first = questions.first
        if first is None or self._asking:
            return
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
        if decision is not None:
            self.session.answer(request_id, decision, plan or None)
            self.state.questions.close(request_id)
        self.call_after_refresh(self.show_questions)  # the next one, once this screen is gone

    def prefill(self, text: str) -> None:
        """Put ``text`` in the input, the cursor at its end, and the focus there."""
        prompt = self.query_one(PromptInput)
        prompt.value = text
        prompt.cursor_position = len(text)
        prompt.focus()
