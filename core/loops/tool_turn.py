"""Provides ``ToolTurn``: the tools' side of the loop's turns.

:meth:`ToolTurn.run` runs the tool calls of one assistant message through the
executor (``tools.executor``). Calls that can change files are framed by two
workspace pins, before and after, so a switch can tell the agent's changes
from the person's; each result is kept in the session as soon as it finishes.
The batch's results then answer the message as one user message, with the
reminders due after them (``loops.reminders``) and the stuck guard's word
(``loops.guards``). Interrupted, every call still gets a result (a finished
one, or "cancelled") and the after-pin is taken.

The loop (``chimera.core.agent_loop.AgentLoop``) says where the results go:
it keeps them in its conversation and its session, and pins the workspace to
its nodes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from chimera.core.events import ReminderInjected, StepEvent
from chimera.core.loops.base import Outcome
from chimera.core.loops.batches import folders_made, results_message, written
from chimera.core.loops.guards import STUCK_REMINDER, StuckDetector
from chimera.core.loops.reminders import ReminderState
from chimera.core.providers.base import Message
from chimera.core.tool_group import ToolGroup
from chimera.core.tools.executor import Executor, ToolCall, ToolOutcome

__all__ = ["Pin", "ToolTurn"]

Pin = Callable[[dict[str, bool] | None, Sequence[str]], Awaitable[None]]
"""Pins the workspace to the conversation's leaf: given, after a batch, what Chimera's ``write``/``edit``
wrote and the folders ``write`` made (see ``loops.batches``)."""


class ToolTurn:
    """Runs each message's calls through ``executor``; ``tools`` say which calls are read-only.

    Events go to ``emit``; ``detector`` watches for a stuck run across turns; the reminders
    already given count for the run going (:meth:`new_run` starts them again).
    """

    def __init__(
        self, executor: Executor, tools: ToolGroup, emit: Callable[[StepEvent], object], detector: StuckDetector
    ) -> None:
        self.executor = executor
        self.tools = tools
        self.emit = emit
        self.stuck = detector
        self.reminders = ReminderState()

    def new_run(self) -> None:
        """A run starts: every reminder may be given again."""
        self.reminders = ReminderState()

    async def run(
        self,
        calls: list[ToolCall],
        *,
        keep: Callable[[ToolOutcome], None],
        answer: Callable[[Message], None],
        pin: Pin,
    ) -> tuple[list[ToolOutcome], Outcome | None]:
        """Run ``calls``; also returns the outcome of a stuck run.

        ``keep`` gets each result as it finishes; ``answer`` the user message of all the results
        (it becomes the conversation's leaf); ``pin`` frames calls that can change files.
        """
        changes_files = any(not self._read_only(c) for c in calls)
        done: dict[str, ToolOutcome] = {}
        try:
            if changes_files:
                await pin(None, ())  # the files as they were before these calls
            outcomes = await self.executor.run(calls, self.emit, done, on_done=keep)
        except asyncio.CancelledError:
            finished = []
            for call in calls:
                outcome = done.get(call.id)
                if outcome is None:
                    outcome = self.executor.cancelled(call)
                    self.emit(outcome.finished_event())
                finished.append(outcome)
            answer(results_message(finished))
            if changes_files:
                await asyncio.shield(pin(written(finished), folders_made(finished)))
            raise
        texts, stop = self._after(outcomes)
        answer(results_message(outcomes, texts))
        for text in texts:
            self.emit(ReminderInjected(text=text))
        if changes_files:
            await pin(written(outcomes), folders_made(outcomes))
        return outcomes, stop

    def _read_only(self, call: ToolCall) -> bool:
        tool = self.tools.get(call.name)
        return tool is not None and tool.read_only

    def _after(self, outcomes: list[ToolOutcome]) -> tuple[list[str], Outcome | None]:
        """Reminders due after these results, and the outcome that stops a stuck run."""
        texts = [r.text for r in self.reminders.due(outcomes)]
        verdict = self.stuck.observe(outcomes)
        repeats = self.stuck.repeats
        if verdict == "stop":
            error = f"the same call gave the same result {repeats} times in a row, even after a reminder"
            return [], Outcome(False, "stuck", error=error)
        if verdict == "remind":
            texts.append(STUCK_REMINDER.format(repeats=repeats))
        return texts, None
