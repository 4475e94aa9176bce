"""Guards that end a run that should not go on: stuck repeats, token and cost budgets, wall time, max turns."""

from __future__ import annotations

import time
from pathlib import Path

from chimera.core.env.local import LocalEnvironment
from chimera.core.events import ReminderInjected, StepEvent, ToolCallFinished, ToolCallStarted
from chimera.core.loop_config import LoopConfig
from chimera.core.providers.base import Usage
from chimera.core.providers.replay import RecordedTurn
from tests import anthropic_harness
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use
from tests.helpers_loop import (
    PidFifo,
    SnapshotReplay,
    assert_alternates,
    bash_turn,
    collect,
    finished,
    has_ended,
    make_core,
    only,
    say,
    turn,
    user_texts,
    watch,
)

STUCK = (
    "You made the same call 3 times and got the same result. "
    "Stop repeating it: try another approach, or explain what blocks you."
)


def trace(events: list[StepEvent]) -> list[str]:
    """Turns, tool results and reminders, in order, as short strings."""
    out = []
    for e in events:
        if e.type == "turn_started":
            out.append(f"turn {e.turn}")  # type: ignore[attr-defined]
        elif isinstance(e, ToolCallFinished):
            out.append(f"result {e.call_id}")
        elif isinstance(e, ReminderInjected):
            out.append("reminder")
    return out


# --- stuck ------------------------------------------------------------------------------

# The same command, spelled with different whitespace: it counts as the same call.
SAME = ["echo same", "echo  same", " echo\tsame ", "echo same"]


async def test_the_third_identical_call_earns_a_reminder_in_the_next_message(env: LocalEnvironment) -> None:
    """Three identical calls, identical output: a reminder_injected event and a <system-reminder> after the results."""
    provider = SnapshotReplay([bash_turn(f"t{i}", cmd) for i, cmd in enumerate(SAME[:3], 1)] + [turn(say("I stop."))])
    core = make_core(provider, env)
    events = await collect(core, "go")
    assert trace(events) == ["turn 1", "result t1", "turn 2", "result t2", "turn 3", "result t3", "reminder", "turn 4"]
    assert [e.text for e in only(events, ReminderInjected)] == [STUCK]
    assert provider.sent[3].messages[-1] == {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t3", "content": "same\n", "is_error": False},
            {"type": "text", "text": f"<system-reminder>{STUCK}</system-reminder>"},
        ],
    }
    for request in provider.sent[1:3]:
        assert user_texts(request.messages[-1]) == []
    assert finished(events).reason == "completed"


async def test_the_fourth_identical_call_stops_the_run_as_stuck(env: LocalEnvironment) -> None:
    """A fourth identical call with identical output ends the run: run_finished stuck, no fifth request."""
    provider = SnapshotReplay([bash_turn(f"t{i}", cmd) for i, cmd in enumerate(SAME, 1)] + [turn(say("never sent"))])
    core = make_core(provider, env)
    events = await collect(core, "go")
    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "stuck", 4)
    assert done.error == "the same call gave the same result 4 times in a row, even after a reminder"
    assert len(provider.sent) == 4
    assert [e.call_id for e in only(events, ToolCallFinished)] == ["t1", "t2", "t3", "t4"]


async def test_polling_whose_output_changes_is_not_stuck(env: LocalEnvironment) -> None:
    """The same command five times whose output changes each time (a growing log) gets no reminder and completes."""
    command = "echo tick >> log; wc -l < log"
    provider = SnapshotReplay([bash_turn(f"t{i}", command) for i in range(1, 6)] + [turn(say("Done polling."))])
    events = await collect(make_core(provider, env), "poll")
    assert [e.output for e in only(events, ToolCallFinished)] == ["1\n", "2\n", "3\n", "4\n", "5\n"]
    assert only(events, ReminderInjected) == []
    done = finished(events)
    assert (done.success, done.reason, done.steps) == (True, "completed", 6)


async def test_a_different_call_in_between_breaks_the_streak(env: LocalEnvironment) -> None:
    """same, same, other, same, same: never three in a row, so no reminder and no stop."""
    commands = ["echo a", "echo a", "echo b", "echo a", "echo a"]
    provider = SnapshotReplay([bash_turn(f"t{i}", c) for i, c in enumerate(commands, 1)] + [turn(say("ok"))])
    events = await collect(make_core(provider, env), "go")
    assert only(events, ReminderInjected) == []
    assert finished(events).reason == "completed"


async def test_a_follow_up_after_a_stuck_stop_sends_a_valid_conversation(env: LocalEnvironment) -> None:
    """After a stuck stop, the next run's request answers every tool_use before the new prompt."""
    provider = SnapshotReplay([bash_turn(f"t{i}", cmd) for i, cmd in enumerate(SAME, 1)] + [turn(say("Sorry."))])
    core = make_core(provider, env)
    assert finished(await collect(core, "go")).reason == "stuck"
    assert finished(await collect(core, "try something else")).reason == "completed"
    assert_alternates(provider.sent[-1].messages)


SIX_SAME = "You made the same call 6 times and got the same result. " + STUCK.split(". ", 1)[1]


def six_globs(first: int) -> Reply:
    """One message of six identical glob calls (the same result each)."""
    calls = [tool_use(f"g{i}", "glob", {"pattern": "*.txt"}) for i in range(first, first + 6)]
    return message(*calls, stop_reason="tool_use")


async def test_one_message_of_six_identical_calls_earns_the_reminder_turn_first(
    api: FakeAnthropic, env: LocalEnvironment
) -> None:
    """Six identical calls in one message: all six answered, then a reminder turn; a new course completes the run."""
    api.script(six_globs(1), message(text("Right, I will stop globbing.")))
    async with anthropic_harness.open_provider(api.url) as provider:
        events = await anthropic_harness.collect(anthropic_harness.make_core(provider, env), "go")

    done = finished(events)
    assert (done.success, done.reason, done.steps) == (True, "completed", 2)
    assert [e.text for e in only(events, ReminderInjected)] == [SIX_SAME]
    results = api.requests[1].messages[-1]["content"]
    assert [b.get("tool_use_id") for b in results] == ["g1", "g2", "g3", "g4", "g5", "g6", None]
    assert results[-1] == {"type": "text", "text": f"<system-reminder>{SIX_SAME}</system-reminder>"}


async def test_a_repeat_after_the_reminder_stops_the_run_as_stuck(api: FakeAnthropic, env: LocalEnvironment) -> None:
    """Six identical calls earn the reminder; the same call again after it stops the run as stuck, no third request."""
    api.script(six_globs(1), message(tool_use("g7", "glob", {"pattern": "*.txt"}), stop_reason="tool_use"))
    api.script(message(text("never sent")))
    async with anthropic_harness.open_provider(api.url) as provider:
        events = await anthropic_harness.collect(anthropic_harness.make_core(provider, env), "go")

    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "stuck", 2)
    assert done.error == "the same call gave the same result 7 times in a row, even after a reminder"
    assert len(only(events, ReminderInjected)) == 1
    assert len(api.requests) == 2


# --- budgets ----------------------------------------------------------------------------


def usage_turns(usages: list[Usage]) -> list[RecordedTurn]:
    """One bash call per usage, then a final answer."""
    return [bash_turn(f"t{i}", f"echo {i}", usage=u) for i, u in enumerate(usages, 1)] + [turn(say("done"))]


async def test_token_budget_stops_after_the_response_that_crosses_it(env: LocalEnvironment) -> None:
    """token_budget=100 with 60 tokens a response: the second response ends the run (budget); its call never runs."""
    provider = SnapshotReplay(usage_turns([Usage(input_tokens=40, output_tokens=20)] * 3))
    events = await collect(make_core(provider, env, LoopConfig(token_budget=100)), "go")
    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "budget", 2)
    assert done.error == "used 120 tokens, over the budget of 100: raise --max-tokens to let it go on"
    last = ["message_completed", "usage", "tool_call_started", "tool_call_finished", "run_finished"]
    assert [e.type for e in events[-5:]] == last  # the call past the budget is published, as not run
    assert [(e.call_id, e.status) for e in only(events, ToolCallFinished)] == [("t1", "ok"), ("t2", "skipped")]
    assert provider.position == 2


async def test_a_run_that_reaches_but_does_not_pass_the_token_budget_completes(env: LocalEnvironment) -> None:
    """Exactly 100 tokens against a budget of 100 is not over it: the run completes."""
    provider = SnapshotReplay(
        [
            bash_turn("t1", "echo 1", usage=Usage(input_tokens=50, output_tokens=10)),
            turn(say("ok"), usage=Usage(30, 10)),
        ]
    )
    events = await collect(make_core(provider, env, LoopConfig(token_budget=100)), "go")
    assert finished(events).reason == "completed"


async def test_cost_budget_stops_after_the_response_that_crosses_it(env: LocalEnvironment) -> None:
    """cost_budget=$0.05 at $0.03 a response: the run stops with reason budget after the second, having cost $0.06."""
    provider = SnapshotReplay(usage_turns([Usage(input_tokens=1, output_tokens=1, cost=0.03)] * 3))
    events = await collect(make_core(provider, env, LoopConfig(cost_budget=0.05)), "go")
    done = finished(events)
    assert (done.success, done.reason, done.steps, done.cost) == (False, "budget", 2, 0.06)
    assert done.error == "spent $0.0600, over the budget of $0.05: raise --max-cost to let it go on"
    assert provider.position == 2


async def test_a_follow_up_after_a_budget_stop_sends_a_valid_conversation(env: LocalEnvironment) -> None:
    """After a budget stop, the next run's request answers every tool_use before the new prompt."""
    provider = SnapshotReplay(usage_turns([Usage(input_tokens=40, output_tokens=20)] * 2))
    core = make_core(provider, env, LoopConfig(token_budget=100))
    assert finished(await collect(core, "go")).reason == "budget"
    assert finished(await collect(core, "wrap up")).reason == "completed"
    assert_alternates(provider.sent[-1].messages)


# --- wall time --------------------------------------------------------------------------


async def test_time_limit_stops_a_sleeping_command_and_kills_it(env: LocalEnvironment, tmp_path: Path) -> None:
    """time_limit=1 with `sleep 30` running: run_finished time_limit, the call gets "Cancelled", the process is gone."""
    fifo = PidFifo(tmp_path / "pid.fifo")
    provider = SnapshotReplay([bash_turn("t1", fifo.command(30)), turn(say("never sent"))])
    core = make_core(provider, env, LoopConfig(time_limit=1))
    events: list[StepEvent] = []
    pidfd = None
    started = time.monotonic()
    try:
        async for event in core.run("wait"):
            events.append(event)
            if isinstance(event, ToolCallStarted):
                pidfd = watch(await fifo.wait_pid())
    finally:
        fifo.close()
    elapsed = time.monotonic() - started
    done = finished(events)
    assert (done.success, done.reason) == (False, "time_limit")
    assert done.error == "stopped at the wall-time limit of 1s: raise --max-time to let it go on"
    assert elapsed < 10
    [result] = only(events, ToolCallFinished)
    assert result.is_error is True
    assert result.output.startswith("Cancelled")
    last = core.messages[-1]
    assert last["role"] == "user"
    assert [(b["tool_use_id"], b["is_error"], b["content"].startswith("Cancelled")) for b in last["content"]] == [
        ("t1", True, True)
    ]
    assert pidfd is not None
    assert has_ended(pidfd), "the sleeping command outlived the run"


# --- max turns --------------------------------------------------------------------------


async def test_max_turns_stops_the_run_with_a_valid_conversation(env: LocalEnvironment) -> None:
    """max_steps=2 with a model that keeps calling tools: two requests, reason max_turns, every call answered."""
    provider = SnapshotReplay([bash_turn(f"t{i}", f"echo {i}") for i in range(1, 4)] + [turn(say("never"))])
    core = make_core(provider, env, LoopConfig(max_steps=2))
    events = await collect(core, "go")
    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "max_turns", 2)
    assert done.error == "stopped after 2 turns (the limit): raise --max-turns to let it go on"
    assert provider.position == 2
    assert [e.call_id for e in only(events, ToolCallFinished)] == ["t1", "t2"]
    assert_alternates(core.messages)


async def test_a_one_turn_limit_says_one_turn(env: LocalEnvironment) -> None:
    """max_steps=1 stops after "1 turn", not "1 turns"."""
    provider = SnapshotReplay([bash_turn("t1", "echo 1"), turn(say("never"))])
    done = finished(await collect(make_core(provider, env, LoopConfig(max_steps=1)), "go"))
    assert done.error == "stopped after 1 turn (the limit): raise --max-turns to let it go on"
