"""``ReplayProvider`` driving the real loop: recorded turns served in order, a clear end when they run out,
and the default turn limit."""

from __future__ import annotations

from chimera.core.env.local import LocalEnvironment
from chimera.core.events import (
    MessageCompleted,
    RetryScheduled,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    TurnStarted,
    UsageReported,
)
from chimera.core.providers.base import Usage
from chimera.core.providers.replay import ReplayProvider
from tests.helpers_loop import call, collect, finished, make_core, only, say, turn

EXHAUSTED = "the recording has no more turns: the run asked the model more often than it was recorded"


async def test_recorded_turns_are_served_in_order_and_their_tools_run(env: LocalEnvironment) -> None:
    """Each request gets the next recorded message, streamed, and the tool calls in it run for real."""
    turns = [
        turn(
            {"type": "thinking", "thinking": "A file first.", "signature": "sig"},
            say("Writing it."),
            call("t1", "write", path="a.txt", content="hello\n"),
            usage=Usage(input_tokens=10, output_tokens=5),
        ),
        turn(call("t2", "read", path="a.txt"), usage=Usage(input_tokens=20, output_tokens=6)),
        turn(say("The file says hello."), usage=Usage(input_tokens=30, output_tokens=7)),
    ]
    provider = ReplayProvider(turns, model="recorded-model")
    events = await collect(make_core(provider, env), "Write a file, then read it.")

    done = finished(events)
    assert (done.success, done.reason, done.steps, done.answer) == (True, "completed", 3, "The file says hello.")
    assert [e.message for e in only(events, MessageCompleted)] == [t.message for t in turns]
    assert [e.turn for e in only(events, TurnStarted)] == [1, 2, 3]
    assert "".join(e.text for e in only(events, ThinkingDelta)) == "A file first."
    assert "".join(e.text for e in only(events, TextDelta)) == "Writing it.The file says hello."
    assert [(e.input_tokens, e.output_tokens) for e in only(events, UsageReported)] == [(10, 5), (20, 6), (30, 7)]
    assert (env.workdir / "a.txt").read_text() == "hello\n"
    results = only(events, ToolCallFinished)
    assert [(r.call_id, r.is_error) for r in results] == [("t1", False), ("t2", False)]
    assert "hello" in results[1].output
    # One request per recorded turn, each with the conversation so far as it was sent.
    assert (provider.position, provider.remaining) == (3, 0)
    assert [len(r.messages) for r in provider.requests] == [1, 3, 5]
    assert provider.requests[2].messages[3] == turns[1].message


async def test_a_run_past_the_end_of_the_recording_fails_with_replay_exhausted(env: LocalEnvironment) -> None:
    """A run that asks for more turns than were recorded ends at once with reason replay_exhausted, saying so."""
    provider = ReplayProvider([turn(call("t1", "glob", pattern="*"))])
    events = await collect(make_core(provider, env), "Keep going.", within=5.0)

    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "replay_exhausted", 2)
    assert done.error == EXHAUSTED
    assert only(events, RetryScheduled) == []  # not retried: asking again cannot help
    assert [r.call_id for r in only(events, ToolCallFinished)] == ["t1"]  # the recorded turn was served in full
    assert (provider.position, provider.remaining) == (1, 0)


async def test_the_default_turn_limit_stops_a_model_that_never_stops_at_50(env: LocalEnvironment) -> None:
    """With the default LoopConfig, a model that keeps calling a tool is stopped after exactly 50 turns."""
    # Each thought differs, so the repeats guard never steps in before the turn limit.
    provider = ReplayProvider([turn(call(f"t{n}", "think", thought=f"step {n}")) for n in range(1, 61)])
    events = await collect(make_core(provider, env), "Think forever.")

    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "max_turns", 50)
    assert "50 turns" in done.error
    assert len(only(events, TurnStarted)) == 50
    assert len(only(events, ToolCallFinished)) == 50
    assert (provider.position, provider.remaining) == (50, 10)
