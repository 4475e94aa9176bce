"""Provides ``RunStatus``: where the run stands, as the status line shows it.

Model, strategy, permission mode, state (``idle``, ``running``, ``compacting``,
``done``, ``failed``, ``interrupted``, ``cancelled``) and since when it works, turn, tokens in and out,
cost, how full the model's context window is, the session's id and the workspace. ``turn`` counts model
requests with their tool calls (the API's ``steps``). Tokens and cost cover
every run since the workbench opened (the session's runs, as Claude Code
counts them, and the variants of its comparisons: ``add_spent``). No Textual here: the status line is a
view of it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING

from chimera.core.wording import describe_ending

if TYPE_CHECKING:  # the events load with the first one (``apply``): the first frame draws none
    from chimera.core.events import CompactionDone, StepEvent, UsageReported

__all__ = ["RunStatus", "not_followed"]


@cache
def not_followed() -> frozenset[type[StepEvent]]:
    """The events the run's status does not count (the events load with the first one)."""
    from chimera.core import events as ev

    return frozenset(
        {  # what the run's status does not count
            ev.BranchCreated,
            ev.BranchSummarized,
            ev.CandidateChosen,
            ev.CandidateProposed,
            ev.CheckpointCreated,
            ev.ControlRejected,
            ev.MessageCompleted,
            ev.PermissionDecided,
            ev.PermissionRequested,
            ev.PlanApproved,
            ev.PlanCancelled,
            ev.PlanEdited,
            ev.PlanProposed,
            ev.PlanStepChecked,
            ev.PlanSuggested,
            ev.Reflected,
            ev.ReminderInjected,
            ev.Replanned,
            ev.RetryScheduled,
            ev.SteeringDelivered,
            ev.SteeringReturned,
            ev.Switched,
            ev.TextDelta,
            ev.ThinkingDelta,
            ev.ToolCallFinished,
            ev.ToolCallStarted,
            ev.ToolOutputDelta,
        }
    )


@dataclass(slots=True)
class RunStatus:
    """The run's state and the session's totals, kept up by :meth:`apply`."""

    model: str = ""
    loop: str = "react"  # the strategy shown: the run's while one works (/plan TASK: plan), else the session's
    # The session's own strategy, which the next runs use: shown again once a run that used another ends ("": the
    # last run's stays, as a replay's line keeps its recording's).
    strategy: str = ""
    mode: str = "ask"
    state: str = "idle"
    turn: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    context: float | None = None  # the share of the model's window the conversation fills
    context_tokens: int = 0  # the conversation's size as last reported (an estimate after a compaction)
    window: int = 0  # the model's context window (0: not known yet)
    started: float | None = None  # the clock when the run (or compaction) working now began
    session: str = ""  # the session's id, once it is kept (a resumed one, or from its first task)
    workspace: str = ""  # the folder the agent works in, as a person reads it
    mcp: str = ""  # the MCP servers ready of those configured ("mcp 2/3"; "" when there are none)
    sandbox: str = ""  # whether commands are sandboxed ("sandboxed", "not sandboxed"; "" when not said)
    clock: Callable[[], float] = field(default=time.monotonic, repr=False, compare=False)

    def begin(self, state: str) -> None:
        """A run or a compaction starts now: its state, and the clock its elapsed time counts from."""
        self.state, self.started = state, self.clock()

    def apply(self, event: StepEvent) -> None:
        """Keep up with one event of a run: its start, turns, usage, compactions and end."""
        from chimera.core.events import (  # (loaded with the first one)
            CompactionDone,
            RunFinished,
            RunStarted,
            TurnStarted,
            UsageReported,
            ignored,
        )

        match event:
            case RunStarted(model=model, loop=loop):
                self.model, self.loop, self.turn = model, loop, 0
                self.session = event.session_id or self.session  # kept on disk from its first task on
                self.begin("running")
            case TurnStarted(turn=turn):
                self.turn = turn
            case UsageReported():
                self.add_usage(event)
            case CompactionDone():
                self.compacted(event)
            case RunFinished(success=success, reason=reason, error=error):
                ended = describe_ending(success, reason, error).state  # a cancelled plan has not failed
                self.state = "done" if ended == "finished" else ended
                self.loop = self.strategy or self.loop
            case _:
                ignored(event, not_followed())

    def restart(self) -> None:
        """A fresh session: idle, nothing counted yet (model, strategy and mode stay as they are)."""
        self.state, self.turn, self.input_tokens, self.output_tokens, self.cost = "idle", 0, 0, 0, 0.0
        self.context, self.context_tokens, self.window, self.started = None, 0, 0, None
        self.session = ""  # it has no id to resume by until its first task

    def add_usage(self, usage: UsageReported) -> None:
        """Count one response's tokens and cost into the totals (which span every run); its context's size is
        the conversation's."""
        self.add_spent(usage)
        if usage.context_window and usage.context_tokens:
            self.context = usage.context_tokens / usage.context_window
            self.context_tokens, self.window = usage.context_tokens, usage.context_window

    def add_spent(self, usage: UsageReported) -> None:
        """Count one response's tokens and cost into the totals, and nothing else: a response of another
        conversation the session ran (a compared variant's), whose context is not the one shown."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cost += usage.cost

    def compacted(self, done: CompactionDone) -> None:
        """The conversation was compacted: its size is the estimate after."""
        if self.context is not None and done.tokens_before:
            self.context *= done.tokens_after / done.tokens_before
            self.context_tokens = round(self.context_tokens * done.tokens_after / done.tokens_before)
