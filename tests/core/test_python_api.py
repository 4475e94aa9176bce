"""The seeds' Python API, used as a script would, against the loopback Messages API with the real client.

The "Full Configuration" example: a provider from the factory, tools as a list,
a strategy with ``max_steps`` and a ``LoopConfig`` holding the permission
policy, a stuck detector, a handler that streams tokens and an event bus; the
synchronous ``Agent.run`` in a ``LocalEnvironment`` context; an
``AgentResult`` with success, steps, cost and reason.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chimera.core.agent import Agent, CodingAgent
from chimera.core.agent_loop import AgentLoop
from chimera.core.bus import EventBus
from chimera.core.context import Context
from chimera.core.env.local import LocalEnvironment
from chimera.core.events import PermissionDecided, RunFinished, StepEvent, TextDelta
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.loops.guards import StuckDetector
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.factory import create_provider
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


@pytest.fixture
def notes_project(project: Path) -> Path:
    """The project holding notes.txt, which says the answer is 42."""
    (project / "notes.txt").write_text("the answer is 42\n")
    return project


@pytest.mark.usefixtures("model_env")
def test_the_full_configuration_example_runs(api: FakeAnthropic, notes_project: Path) -> None:
    api.script(
        message(tool_use("t1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": "rm notes.txt"}), stop_reason="tool_use"),
        message(text("The notes say the answer is 42.")),
    )
    streamed: list[str] = []
    seen: list[StepEvent] = []
    bus = EventBus()
    bus.subscribe(seen.append, name="script")
    config = LoopConfig(
        permissions=PermissionPolicy.build("accept-edits", deny=["bash(rm *)"], tools=DEFAULT_TOOLS.names),
        detector=StuckDetector(after=3),
        handler=lambda event: streamed.append(event.text) if isinstance(event, TextDelta) else None,
        event_bus=bus,
    )
    provider = create_provider("claude-sonnet-4-6")
    agent = Agent(provider=provider, tools=list(DEFAULT_TOOLS), loop=ReAct(max_steps=50, config=config))

    with LocalEnvironment(workdir=notes_project) as env:
        result = agent.run("What do the notes say?", env)

    assert (result.success, result.steps, result.reason) == (True, 3, "completed")
    assert result.cost > 0
    assert result.answer == "The notes say the answer is 42."
    assert "".join(streamed) == "The notes say the answer is 42."  # the handler saw the tokens as they came
    assert (notes_project / "notes.txt").exists()  # the policy in the config refused the rm
    (refused,) = [e for e in seen if isinstance(e, PermissionDecided)]
    assert refused.decision == "deny"
    assert isinstance(seen[-1], RunFinished)  # the bus had every event when run() returned
    assert ReAct(max_steps=7).config.max_steps == 7


@pytest.mark.usefixtures("model_env")
def test_a_strategy_runs_a_context_synchronously_and_streams_events(api: FakeAnthropic, project: Path) -> None:
    """``ReAct.run(provider, tools, context, env)`` answers a conversation that ends with the person's message."""
    api.script(message(text("Blue, as you said.")), message(text("Second run.")))
    context = Context.of(
        [
            {"role": "user", "content": "My favourite colour is blue."},
            {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]},
            {"role": "user", "content": "What is my favourite colour?"},
        ]
    )
    with LocalEnvironment(workdir=project) as env:
        result = ReAct(max_steps=2).run(create_provider(), DEFAULT_TOOLS, context, env)

        async def stream() -> list[StepEvent]:
            events = ReAct().events(create_provider(), DEFAULT_TOOLS, "Say something.", env)
            return [event async for event in events]

        events = asyncio.run(stream())

    assert (result.success, result.answer, result.steps) == (True, "Blue, as you said.", 1)
    assert [m["role"] for m in api.requests[0].messages] == ["user", "assistant", "user"]
    assert events[0].type == "run_started"
    assert isinstance(events[-1], RunFinished)
    assert events[-1].answer == "Second run."


def test_a_context_that_does_not_end_with_the_persons_message_is_refused(project: Path) -> None:
    ended_by_model = Context.of([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}])
    with LocalEnvironment(workdir=project) as env, pytest.raises(ValueError, match="end with the person's message"):
        ReAct().run(create_provider(api_key="k", base_url="http://127.0.0.1:9"), DEFAULT_TOOLS, ended_by_model, env)


@pytest.mark.usefixtures("model_env")
async def test_run_inside_an_event_loop_points_at_arun(api: FakeAnthropic, project: Path) -> None:
    agent = CodingAgent(create_provider())
    with LocalEnvironment(workdir=project) as env, pytest.raises(RuntimeError, match="await arun"):
        agent.run("hi", env)
    assert not api.requests
    assert isinstance(agent.core_for(env), AgentLoop)  # the preset runs on the one core
