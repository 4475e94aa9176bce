"""Provides ``PlanQuestions``: proposed plans waiting for the person's answer, by request id.

A plan is published as a ``plan_proposed`` event carrying a request id; the run
waits until a front end answers that id (``approve``, ``edit`` with the edited
text, ``revise`` with what to change, or ``cancel``). The event carries no future, so it serializes like any
other and every front end answers the same way. Permission requests are the
executor's (``tools.executor``); the loop asks here first, then there.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable

from chimera.core.events import PlanProposed
from chimera.core.loops.base import PLAN_DECISIONS, PlanAnswer

__all__ = ["PlanQuestions"]


class PlanQuestions:
    """The plans proposed and not yet answered."""

    def __init__(self) -> None:
        self._pending: dict[str, asyncio.Future[PlanAnswer]] = {}

    def __contains__(self, request_id: object) -> bool:
        return request_id in self._pending

    async def ask(self, steps: list[str], emit: Callable[[PlanProposed], object]) -> PlanAnswer:
        """Publish ``steps`` through ``emit`` and wait for the answer to its request id."""
        request_id = f"plan:{uuid.uuid4().hex[:8]}"
        pending: asyncio.Future[PlanAnswer] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = pending
        try:
            emit(PlanProposed(steps=steps, request_id=request_id))
            return await pending
        finally:
            del self._pending[request_id]

    def answer(self, request_id: str, decision: str, plan: str | None = None) -> bool:
        """Answer the plan ``request_id``; False when it is no longer open. ValueError for a decision
        that is not a plan's, or an edit without its text."""
        if decision not in PLAN_DECISIONS:
            raise ValueError(f"a plan answer is one of {', '.join(PLAN_DECISIONS)}, not {decision!r}")
        if decision == "edit" and not (plan or "").strip():
            raise ValueError("an edited plan needs its text")
        if decision == "revise" and not (plan or "").strip():
            raise ValueError("a plan to revise needs what to change")
        pending = self._pending.get(request_id)
        if pending is None or pending.done():
            return False
        pending.set_result(PlanAnswer(decision, plan or ""))
        return True

    def open(self) -> str | None:
        """The request id of the plan waiting for an answer, if one is."""
        return next((request_id for request_id, pending in self._pending.items() if not pending.done()), None)

    def cancel_all(self) -> None:
        """Nobody will answer: every open plan is cancelled."""
        for pending in self._pending.values():
            if not pending.done():
                pending.set_result(PlanAnswer("cancel"))
