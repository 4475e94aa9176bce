"""``WorkbenchState``: the questions a run waits on, the plan and its checks, the run's status, the queued
follow-ups and the words handed back, all from the events one reducer reads (no screen)."""

from __future__ import annotations

from chimera.core.events import (
    CompactionDone,
    PermissionDecided,
    PermissionRequested,
    PlanApproved,
    PlanCancelled,
    PlanProposed,
    PlanStepChecked,
    Replanned,
    RunFinished,
    RunStarted,
    SteeringReturned,
    TurnStarted,
    UsageReported,
)
from chimera.tui.state import WorkbenchState


def asked(request_id: str, command: str) -> PermissionRequested:
    return PermissionRequested(request_id=request_id, call_id=f"c-{request_id}", name="bash", args={"command": command})


def test_questions_wait_in_the_order_asked_and_leave_when_answered() -> None:
    """Two permission questions wait oldest first; an answer closes its own, the run's end closes the rest."""
    state = WorkbenchState()
    state.apply_all([RunStarted(task="t", model="m", loop="react"), asked("r1", "make"), asked("r2", "make test")])
    assert [q.request_id for q in state.questions.open] == ["r1", "r2"]
    assert state.questions.first is not None
    assert state.questions.first.args == {"command": "make"}
    state.apply(PermissionDecided(call_id="c-r1", decision="allow", request_id="r1"))
    assert [q.request_id for q in state.questions.open] == ["r2"]
    state.apply(RunFinished(success=False, reason="interrupted", steps=1, cost=0.0))
    assert state.questions.open == []


def test_a_plan_waits_for_its_answer_and_its_checks_mark_the_current_step() -> None:
    """A plan asked about is an open question until approved; then the first step not yet passed is current, and a
    failed check says why."""
    state = WorkbenchState()
    state.apply(PlanProposed(steps=["read", "fix", "test"], request_id="plan:1"))
    plan = state.questions.plan
    assert plan is not None
    assert plan.steps == ("read", "fix", "test")
    assert state.plan.phase == "proposed"
    assert state.plan.current is None
    state.apply(PlanApproved(steps=["read", "fix", "test"]))
    assert state.questions.plan is None
    assert state.plan.current == 0
    state.apply(PlanStepChecked(index=0, passed=True))
    state.apply(PlanStepChecked(index=1, passed=False, detail="2 tests fail"))
    assert state.plan.checks == [True, False, None]
    assert (state.plan.current, state.plan.failures) == (1, {1: "2 tests fail"})
    state.apply(Replanned(steps=["read", "fix it another way", "test"], why="a.py changed"))
    assert state.plan.checks == [True, None, None]  # the passed step it keeps stays passed
    assert (state.plan.current, state.plan.why_replanned) == (1, "a.py changed")


def test_a_plan_proposed_without_a_question_asks_nothing_and_a_cancelled_one_ends() -> None:
    state = WorkbenchState()
    state.apply(PlanProposed(steps=["one"]))
    assert state.questions.open == []
    state.apply(PlanProposed(steps=["two"], request_id="plan:2"))
    state.apply(PlanCancelled(reason="cancelled by the person"))
    assert state.questions.open == []
    assert state.plan.phase == "cancelled"


def test_the_run_status_counts_turns_tokens_cost_and_how_the_run_ended() -> None:
    """What the status line shows: the run's model and strategy, its turn, the session's tokens and cost, context."""
    state = WorkbenchState()
    state.apply_all(
        [
            RunStarted(task="t", model="claude-x", loop="plan"),
            TurnStarted(turn=2),
            UsageReported(input_tokens=1000, output_tokens=50, cost=0.5, context_tokens=500, context_window=1000),
            CompactionDone(summary="s", tokens_before=500, tokens_after=250),
            RunFinished(success=False, reason="plan_cancelled", steps=2, cost=0.5),
        ]
    )
    status = state.status
    assert (status.model, status.loop, status.turn, status.state) == ("claude-x", "plan", 2, "cancelled")
    assert (status.input_tokens, status.output_tokens, status.cost, status.context) == (1000, 50, 0.5, 0.25)


def test_a_follow_up_leaves_the_queue_when_its_run_starts_and_handed_back_words_are_taken_once() -> None:
    state = WorkbenchState()
    state.follow_ups = ["second", "third"]
    state.apply(RunStarted(task="second", model="m", loop="react"))
    assert state.follow_ups == ["third"]
    state.apply_all([SteeringReturned(text="a"), SteeringReturned(text="b")])
    assert state.take_returned() == ["a", "b"]
    assert state.take_returned() == []


def test_a_told_history_asks_nothing_and_counts_nothing() -> None:
    """A resumed session's events show in the conversation and the plan, never as a question or as tokens."""
    state = WorkbenchState()
    state.tell(
        [
            RunStarted(task="earlier", model="m", loop="plan"),
            PlanProposed(steps=["a"], request_id="plan:old"),
            UsageReported(input_tokens=999, output_tokens=9),
            asked("r-old", "ls"),
        ]
    )
    assert [e.kind for e in state.transcript.entries] == ["user", "plan"]
    assert state.questions.open == []
    assert (state.status.input_tokens, state.status.state) == (0, "idle")
    assert state.plan.steps == ["a"]
