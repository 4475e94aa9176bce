"""Provides ``StatusLine``: model, strategy, turn, context, tokens, cost, permission mode and state.

``turn`` counts model requests with their tool calls (the API's ``steps``); ``context`` is the
share of the model's window the conversation fills (compaction starts at 80%).

Tokens and cost cover the same span: every run since the workbench opened
(the session's runs, as Claude Code counts them), labelled ``session``.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from chimera.core import events as ev
from chimera.core.events import CompactionDone, RunFinished, RunStarted, StepEvent, TurnStarted, UsageReported, ignored
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import describe_ending, tokens

__all__ = ["StatusLine"]


NOT_FOLLOWED: frozenset[type[ev.StepEvent]] = frozenset(
    {  # what the status line does not count
        ev.BranchCreated,
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


class StatusLine(Static):
    """One line at the bottom of the screen that says where the run stands."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "status-line--running",
        "status-line--compacting",
        "status-line--done",
        "status-line--failed",
        "status-line--interrupted",
        "status-line--cancelled",
        "status-line--idle",
        "status-line--model",
    }

    DEFAULT_CSS = """
    StatusLine {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-wrap: nowrap;
        text-overflow: ellipsis;
    }
    StatusLine > .status-line--running { color: $accent; text-style: bold; }
    StatusLine > .status-line--compacting { color: $accent; text-style: bold; }
    StatusLine > .status-line--done { color: $success; }
    StatusLine > .status-line--failed { color: $error; text-style: bold; }
    StatusLine > .status-line--interrupted { color: $warning; }
    StatusLine > .status-line--cancelled { color: $warning; }
    StatusLine > .status-line--idle { color: $text-muted; }
    StatusLine > .status-line--model { color: $text; text-style: bold; }
    """

    model: reactive[str] = reactive("")
    loop: reactive[str] = reactive("react")
    mode: reactive[str] = reactive("ask")
    turn: reactive[int] = reactive(0)
    input_tokens: reactive[int] = reactive(0)
    output_tokens: reactive[int] = reactive(0)
    cost: reactive[float] = reactive(0.0)
    state: reactive[str] = reactive("idle")
    context: reactive[float | None] = reactive(None)  # the share of the model's window the conversation fills

    def follow(self, event: StepEvent) -> None:
        """Keep up with one event of a run: its start, turns, usage, compactions and end."""
        match event:
            case RunStarted(model=model, loop=loop):
                self.model, self.loop, self.state, self.turn = model, loop, "running", 0
            case TurnStarted(turn=turn):
                self.turn = turn
            case UsageReported():
                self.add_usage(event)
            case CompactionDone():
                self.compacted(event)
            case RunFinished(success=success, reason=reason, error=error):
                ended = describe_ending(success, reason, error).state  # a cancelled plan has not failed
                self.state = "done" if ended == "finished" else ended
            case _:
                ignored(event, NOT_FOLLOWED)

    def add_usage(self, usage: UsageReported) -> None:
        """Count one response's tokens and cost into the totals (which span every run)."""
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cost += usage.cost
        if usage.context_window and usage.context_tokens:
            self.context = usage.context_tokens / usage.context_window

    def compacted(self, done: CompactionDone) -> None:
        """The conversation was compacted: its size is the estimate after."""
        if self.context is not None and done.tokens_before:
            self.context *= done.tokens_after / done.tokens_before

    def render(self) -> Text:
        """The line, most telling first (state, model, permission mode); cut with an ellipsis when narrow."""
        state_style = self.get_component_rich_style(f"status-line--{self.state}", partial=True)
        return Text.assemble(
            (self.state, state_style),
            " · ",
            (
                terminal_safe(self.model, one_line=True),
                self.get_component_rich_style("status-line--model", partial=True),
            ),
            f" · {self.mode} · {self.loop} · turn {self.turn}",
            f" · context {self.context:.0%}" if self.context is not None else "",
            f" · session: {tokens(self.input_tokens)} in / {tokens(self.output_tokens)} out, ${self.cost:.4f}",
        )
