"""The loop's unit is a step: strategies are built from ``step()`` over a ``Context`` value.

A strategy written here against the narrow ``Core`` protocol (no import of the
loop) drives the real ``AgentLoop`` with real tools; the ``Context`` forks
without sharing what is added after the fork.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from chimera.core import agent_loop as agent_loop_module
from chimera.core.agent_loop import AgentLoop
from chimera.core.context import Context
from chimera.core.env.local import LocalEnvironment
from chimera.core.events import RunFinished
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.base import Core, Outcome, StepResult
from chimera.core.messages import CONTINUE_PROMPT, is_continue_prompt
from chimera.core.providers.replay import RecordedTurn, ReplayProvider
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.helpers_loop import call, collect, finished, say, turn


@pytest.fixture
def env(tmp_path: Path) -> Iterator[LocalEnvironment]:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.txt").write_text("alpha\n")
    with LocalEnvironment(root) as environment:
        yield environment


@dataclass
class StepByStep:
    """A strategy that takes at most ``limit`` steps and keeps each result."""

    limit: int
    config: LoopConfig = field(default_factory=LoopConfig)
    name: str = "step-by-step"
    results: list[StepResult] = field(default_factory=list)

    async def drive(self, core: Core, task: str) -> Outcome:
        await core.user_turn(task)
        for _ in range(self.limit):
            result = await core.step()
            self.results.append(result)
            if result.outcome is not None:
                return result.outcome
        return Outcome(False, "enough", error=f"stopped after {self.limit} steps by the strategy")


def loop_with(strategy: StepByStep, turns: list[RecordedTurn], env: LocalEnvironment) -> AgentLoop:
    return AgentLoop(ReplayProvider(turns), DEFAULT_TOOLS, env, strategy=strategy)


async def test_a_strategy_built_from_steps_sees_each_turns_calls_and_results(env: LocalEnvironment) -> None:
    strategy = StepByStep(limit=5)
    turns = [turn(call("r1", "read", path="notes.txt")), turn(say("It says alpha."))]
    events = await collect(loop_with(strategy, turns, env), "what do the notes say?")

    first, second = strategy.results
    assert [c.name for c in first.calls] == ["read"]
    assert "alpha" in first.outcomes[0].result.output
    assert first.outcome is None
    assert second.calls == []
    assert second.outcome == Outcome(True, "completed", answer="It says alpha.")
    done = finished(events)
    assert (done.success, done.steps, done.answer) == (True, 2, "It says alpha.")


async def test_a_strategy_decides_when_to_stop(env: LocalEnvironment) -> None:
    """The strategy, not the step, ends the drive: the run reports the strategy's reason."""
    strategy = StepByStep(limit=1)
    turns = [turn(call("r1", "read", path="notes.txt")), turn(say("never asked for"))]
    events = await collect(loop_with(strategy, turns, env), "read the notes")

    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "enough", 1)
    assert done.error == "stopped after 1 steps by the strategy"


async def test_a_cut_answer_is_continued_by_the_next_step_and_joined(env: LocalEnvironment) -> None:
    strategy = StepByStep(limit=5)
    cut = RecordedTurn(message={"role": "assistant", "content": [say("The answer is ")]}, stop_reason="max_tokens")
    core = loop_with(strategy, [cut, turn(say("forty-two."))], env)
    events = await collect(core, "what is it?")

    assert [r.continued for r in strategy.results] == [True, False]
    assert finished(events).answer == "The answer is forty-two."
    assert is_continue_prompt(core.messages[2])
    assert core.messages[2]["content"] == CONTINUE_PROMPT
    assert isinstance(events[-1], RunFinished)


def test_a_forked_context_does_not_see_what_is_added_to_the_other() -> None:
    base = Context.of([{"role": "user", "content": "task"}], node_id="n1")
    fork = base.fork()
    fork.add({"role": "assistant", "content": [say("candidate A")]}, node_id="n2")
    base.add({"role": "assistant", "content": [say("candidate B")]}, node_id="n3")

    assert [m["content"][0]["text"] for m in (fork.messages[1], base.messages[1])] == ["candidate A", "candidate B"]
    assert (fork.node_id, base.node_id) == ("n2", "n3")
    assert len(base.messages) == len(fork.messages) == 2


def test_user_turns_in_a_row_are_merged_into_one_message() -> None:
    """The API wants alternating turns: tool results, a reminder and a steering message become one user message."""
    context = Context.of(
        [
            {"role": "user", "content": "task"},
            {"role": "assistant", "content": [call("t1", "read", path="a")]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x"}]},
        ]
    )
    context.add({"role": "user", "content": "also look at b"})

    assert [m["role"] for m in context.messages] == ["user", "assistant", "user"]
    assert [b["type"] for b in context.messages[-1]["content"]] == ["tool_result", "text"]


def test_strategies_do_not_import_the_loop() -> None:
    """The strategy modules see the narrow Core protocol: importing one does not import AgentLoop."""
    probe = "import sys, chimera.core.loops.react; print('chimera.core.agent_loop' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


@dataclass
class RaisesTimeout:
    """A strategy whose work raises a TimeoutError of its own (a socket's, a library's), not the loop's limit."""

    config: LoopConfig = field(default_factory=LoopConfig)
    name: str = "raises-timeout"

    async def drive(self, core: Core, task: str) -> Outcome:
        raise TimeoutError("the socket timed out")


@pytest.mark.parametrize("time_limit", [None, 3600.0])
async def test_a_timeout_inside_the_work_is_a_failure_not_the_wall_time_limit(
    env: LocalEnvironment, time_limit: float | None
) -> None:
    """With no limit the run once hung (the limit's wording formatted None); with one, it was misnamed."""
    strategy = RaisesTimeout(config=LoopConfig(time_limit=time_limit))
    loop = AgentLoop(ReplayProvider([]), DEFAULT_TOOLS, env, strategy=strategy)
    done = finished(await collect(loop, "go", within=10))
    assert (done.success, done.reason) == (False, "error")
    assert done.error == "the run failed: TimeoutError: the socket timed out"


async def test_a_run_that_cannot_start_raises_instead_of_leaving_its_reader_waiting(
    env: LocalEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*args: object, **kwargs: object) -> tuple[str, None]:
        raise RuntimeError("the prompt could not be built")

    monkeypatch.setattr(agent_loop_module, "workspace_prompt", broken)
    loop = loop_with(StepByStep(limit=1), [turn(say("hi"))], env)
    with pytest.raises(RuntimeError, match="could not be built"):
        await collect(loop, "go", within=10)
