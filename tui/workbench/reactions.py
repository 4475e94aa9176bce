"""Provides ``Reactions``: what the workbench's parts do once a batch of the bus's events is on screen, and the
conversation told again from the session (a resumed session's history, the branch a switch moved to).

The state and the views of it (``tui.state``, the widgets) follow every event; the parts act on a few: a run's
start takes the welcome away, its end lets the next task go, a switch tells the branch again, anything but
streamed words may change the questions shown. The kinds they leave alone are named (:func:`not_acted_on`), so a
kind added later cannot pass unseen (``tests/tui/test_events_closed.py``).
"""

from __future__ import annotations

import asyncio
from functools import cache
from typing import TYPE_CHECKING

from chimera.tui.widgets.welcome import Welcome

if TYPE_CHECKING:
    from chimera.core.events import StepEvent, Switched
    from chimera.tui.app import ChimeraApp

__all__ = ["Reactions", "not_acted_on", "streamed"]


@cache
def streamed() -> frozenset[type[StepEvent]]:
    """The events that come many a second while a model or a command streams, and only add to what is shown
    (the events load with the first one)."""
    from chimera.core.events import TextDelta, ThinkingDelta, ToolOutputDelta

    return frozenset({TextDelta, ThinkingDelta, ToolOutputDelta})


@cache
def not_acted_on() -> frozenset[type[StepEvent]]:
    """The events the workbench's parts leave to its state and the views of it (the events load with the first one)."""
    from chimera.core import events as ev

    return frozenset(
        {
            ev.BranchCreated,
            ev.BranchSummarized,
            ev.CandidateChosen,
            ev.CandidateProposed,
            ev.CheckpointCreated,
            ev.CompactionDone,
            ev.ControlRejected,
            ev.MessageCompleted,
            ev.PermissionDecided,
            ev.PlanApproved,
            ev.PlanCancelled,
            ev.PlanEdited,
            ev.PlanProposed,
            ev.PermissionRequested,
            ev.PlanStepChecked,
            ev.PlanSuggested,
            ev.Reflected,
            ev.ReminderInjected,
            ev.Replanned,
            ev.RetryScheduled,
            ev.SteeringDelivered,
            ev.SteeringReturned,
            ev.TextDelta,
            ev.ThinkingDelta,
            ev.ToolCallFinished,
            ev.ToolCallStarted,
            ev.ToolOutputDelta,
            ev.TurnStarted,
            ev.UsageReported,
        }
    )


class Reactions:
    """The workbench's parts acting on the events shown; ``history_shown`` is set once a told-again conversation is
    on screen."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self.history_shown = asyncio.Event()

    async def show_history(self) -> None:
        """A resumed session: its earlier turns first, then the input is the next turn."""
        from chimera.core.sessions.history import branch_events

        app = self.app
        events = await asyncio.to_thread(branch_events, app.session.store)
        app.state.tell(events)
        app.transcript.note(f"Resumed session {app.session.id}")
        app.conversation.redraw()
        self.history_shown.set()

    async def _show_branch(self, switched: Switched) -> None:
        """After a switch the conversation is the branch switched to: told again from the session, then the switch."""
        from chimera.core.sessions.history import branch_events

        events = await asyncio.to_thread(branch_events, self.app.session.store)
        self.app.conversation.tell_again([*events, switched])
        self.history_shown.set()

    def shown(self, events: list[StepEvent]) -> None:
        """A batch of the bus's events is in the state and on screen: the parts act on it."""
        from chimera.core.events import RunFinished, RunStarted, Switched, ignored  # (loaded with the first one)

        app = self.app
        app.prompt.take_back()
        if app.session.demo and app.state.status.state != "idle":
            from chimera.tui.widgets.demo_banner import DemoBanner

            app.query_one(DemoBanner).folded = True
        if any(type(event) not in streamed() for event in events):  # streamed words change no question, no plan
            app.answers.show()
        for event in events:
            match event:
                case Switched():
                    self.history_shown.clear()
                    app.run_worker(self._show_branch(event), group="history", exclusive=True, exit_on_error=False)
                case RunFinished():
                    app.runs.ended()
                    if app.query_one("#tree").has_class("-shown"):  # the run grew the tree
                        app.session_tree.load()
                case RunStarted():
                    for welcome in app.query(Welcome):  # the first task is sent: the conversation takes its place
                        welcome.remove()
                case _:
                    ignored(event, not_acted_on())
