"""The agent loop over the real ``anthropic`` SDK, against a loopback Messages API.

What goes over the wire: the request the server receives, the events a
streamed answer becomes, thinking blocks and their signatures sent back
unchanged, parallel tool calls answered in one message, the turn limit, and
a tool call whose streamed input is not JSON.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from chimera.core.agent import CodingAgent
from chimera.core.env.local import LocalEnvironment
from chimera.core.events import (
    MessageCompleted,
    RunStarted,
    StepEvent,
    TextDelta,
    ThinkingDelta,
    ToolCallFinished,
    ToolCallStarted,
    TurnStarted,
    UsageReported,
)
from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.providers.factory import create_provider
from chimera.core.providers.pricing import cost_of
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.anthropic_harness import (
    API_KEY,
    MODEL,
    collect,
    config,
    finished,
    kinds,
    make_core,
    only,
    open_provider,
    workspace,
)
from tests.fake_anthropic import FakeAnthropic, message, redacted_thinking, text, thinking, tool_use

# A thinking signature and redacted data with every base64 character that JSON or a
# careless re-encoding could disturb.
SIGNATURE = "EqQBCkYIBxgCKkBz+/0Ab9x==Zq/+sig\\u00e9" + "x" * 64
REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP+/==" * 3


@pytest.fixture
async def provider(api: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    async with open_provider(api.url) as p:
        yield p


@pytest.fixture
def env(tmp_path: Path) -> Iterator[LocalEnvironment]:
    with workspace(tmp_path) as e:
        yield e


async def test_plain_answer_streams_text_then_message_usage_and_cost(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A streamed answer arrives as text deltas, then the whole message, its tokens and cost, then success."""
    api.script(
        message(
            text("The answer is 42.", pieces=4),
            input_tokens=1200,
            output_tokens=345,
            cache_read=100,
            cache_write=200,
        )
    )
    events = await collect(make_core(provider, env), "What is the answer?")

    assert kinds(events) == [
        "run_started",
        "turn_started",
        "text_delta",
        "text_delta",
        "text_delta",
        "text_delta",
        "message_completed",
        "usage",
        "run_finished",
    ]
    assert only(events, RunStarted)[0].model == MODEL
    assert "".join(d.text for d in only(events, TextDelta)) == "The answer is 42."
    completed = only(events, MessageCompleted)[0]
    assert completed.message == {
        "role": "assistant",
        "content": [{"type": "text", "text": "The answer is 42."}],
    }
    assert completed.stop_reason == "end_turn"

    usage = only(events, UsageReported)[0]
    assert (usage.input_tokens, usage.output_tokens) == (1200, 345)
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (100, 200)
    # Sonnet: $3 in, $15 out, cache reads at a tenth of input, cache writes at 1.25x, per million tokens.
    expected = (1200 * 3.0 + 345 * 15.0 + 100 * 0.30 + 200 * 3.75) / 1_000_000
    tokens = {"input_tokens": 1200, "output_tokens": 345, "cache_read_tokens": 100, "cache_write_tokens": 200}
    assert cost_of(MODEL, **tokens) == pytest.approx(expected)
    assert usage.cost > 0
    assert usage.cost == round(expected, 6)
    assert usage.total_cost == round(expected, 6)

    done = finished(events)
    assert (done.success, done.reason, done.steps, done.error) == (True, "completed", 1, "")
    assert done.answer == "The answer is 42."
    assert done.cost == round(expected, 6)


@pytest.mark.parametrize(
    ("model", "input_tokens", "output_tokens", "dollars"),
    [
        # The price table, per million tokens: Opus $5 in, $25 out: 2000 * $5 + 400 * $25 = $0.02.
        ("claude-opus-4-8", 2000, 400, 0.02),
        # Opus 4.1 $15 in, $75 out: 2000 * $15 + 400 * $75 = $0.06.
        ("claude-opus-4-1-20250805", 2000, 400, 0.06),
        # Haiku 4.5 $1 in, $5 out: 3000 * $1 + 600 * $5 = $0.006.
        ("claude-haiku-4-5-20251001", 3000, 600, 0.006),
    ],
)
async def test_usage_cost_follows_the_price_table_of_the_model(
    api: FakeAnthropic, env: LocalEnvironment, model: str, input_tokens: int, output_tokens: int, dollars: float
) -> None:
    """The usage event and the run's cost price the server's token counts at the model's row of the table."""
    api.script(message(text("Priced."), input_tokens=input_tokens, output_tokens=output_tokens, model=model))
    async with open_provider(api.url, model=model) as provider:
        events = await collect(make_core(provider, env), "Say something.")

    usage = only(events, UsageReported)[0]
    assert (usage.input_tokens, usage.output_tokens) == (input_tokens, output_tokens)
    assert usage.cost == pytest.approx(dollars)
    assert usage.total_cost == pytest.approx(dollars)
    done = finished(events)
    assert done.success, done.error
    assert done.cost == pytest.approx(dollars)


async def test_a_local_model_with_no_price_costs_nothing_and_runs(api: FakeAnthropic, env: LocalEnvironment) -> None:
    """A model the table does not know (a local server's) is counted at $0, and the run succeeds."""
    local = "qwen2.5-coder:7b"
    api.script(message(text("Local answer."), input_tokens=5000, output_tokens=800, model=local))
    async with open_provider(api.url, model=local) as provider:
        events = await collect(make_core(provider, env), "Say something.")

    assert only(events, RunStarted)[0].model == local
    assert api.requests[0].body["model"] == local
    usage = only(events, UsageReported)[0]
    assert (usage.input_tokens, usage.output_tokens) == (5000, 800)
    assert (usage.cost, usage.total_cost) == (0.0, 0.0)
    done = finished(events)
    assert (done.success, done.reason, done.answer, done.cost) == (True, "completed", "Local answer.", 0.0)


async def test_create_provider_sends_the_model_it_was_given(
    api: FakeAnthropic, model_env: dict[str, str], env: LocalEnvironment
) -> None:
    """create_provider(model=...) against ANTHROPIC_BASE_URL sends that model in the request and reports it."""
    assert model_env["CHIMERA_MODEL"] != "claude-haiku-4-5"  # the argument wins over the environment
    api.script(message(text("ok"), model="claude-haiku-4-5"))
    provider = create_provider(model="claude-haiku-4-5")
    try:
        events = await collect(make_core(provider, env), "Say ok.")
    finally:
        await provider.aclose()

    assert finished(events).success
    assert len(api.requests) == 1
    assert api.requests[0].body["model"] == "claude-haiku-4-5"
    assert only(events, RunStarted)[0].model == "claude-haiku-4-5"


async def test_request_carries_model_stream_system_tools_limit_and_key(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """The server receives the model, stream=true, the system prompt, tools, max_tokens and the API key."""
    api.script(message(text("ok")))
    core = make_core(provider, env, config(max_tokens=1234))
    done = finished(await collect(core, "Say ok."))
    assert done.success, done.error

    assert len(api.requests) == 1
    request = api.requests[0]
    assert (request.method, request.path) == ("POST", "/v1/messages")
    body = request.body
    assert set(body) == {"model", "max_tokens", "system", "messages", "tools", "stream"}
    assert body["model"] == MODEL
    assert body["stream"] is True
    assert body["max_tokens"] == 1234
    assert body["system"] == core.system
    assert str(env.workdir) in body["system"]
    assert body["messages"] == [{"role": "user", "content": "Say ok."}]
    assert body["tools"] == DEFAULT_TOOLS.schemas()
    assert [t["name"] for t in body["tools"]] == ["read", "write", "edit", "glob", "grep", "bash", "think"]
    assert "thinking" not in body
    # anthropic 2.14 sends an api_key as a bearer token (it has no x-api-key header).
    assert request.headers["authorization"] == f"Bearer {API_KEY}"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["anthropic-version"]
    # The SDK's own retries are off: the loop retries, visibly.
    assert request.headers["x-stainless-retry-count"] == "0"


async def test_thinking_blocks_and_signatures_go_back_unchanged(api: FakeAnthropic, env: LocalEnvironment) -> None:
    """Thinking (with its signature), redacted thinking and the tool call go back byte for byte."""
    (env.workdir / "notes.txt").write_text("hello from the notes\n")
    api.script(
        message(
            thinking("I should read the notes first.", SIGNATURE, pieces=3),
            redacted_thinking(REDACTED),
            tool_use("toolu_01", "read", {"path": "notes.txt"}, pieces=4),
            stop_reason="tool_use",
        ),
        message(text("The notes say hello.")),
    )
    budget = {"type": "enabled", "budget_tokens": 1024}
    async with open_provider(api.url, thinking=budget) as provider:
        events = await collect(make_core(provider, env), "What do the notes say?")

    done = finished(events)
    assert done.success, done.error
    assert done.answer == "The notes say hello."
    assert "".join(d.text for d in only(events, ThinkingDelta)) == "I should read the notes first."

    first, second = api.requests
    assert first.body["thinking"] == budget
    assert "think" not in [t["name"] for t in first.body["tools"]]  # the model thinks natively
    sent_back = [
        {"type": "thinking", "thinking": "I should read the notes first.", "signature": SIGNATURE},
        {"type": "redacted_thinking", "data": REDACTED},
        {"type": "tool_use", "id": "toolu_01", "name": "read", "input": {"path": "notes.txt"}},
    ]
    assert second.messages[0] == {"role": "user", "content": "What do the notes say?"}
    assert second.messages[1] == {"role": "assistant", "content": sent_back}
    assert only(events, MessageCompleted)[0].message == {"role": "assistant", "content": sent_back}
    # Byte for byte on the wire, too: the same JSON string the server streamed.
    assert json.dumps(SIGNATURE).encode() in second.raw
    assert json.dumps(REDACTED).encode() in second.raw

    assert len(second.messages) == 3
    results = second.messages[2]
    assert results["role"] == "user"
    assert len(results["content"]) == 1
    result = results["content"][0]
    assert (result["type"], result["tool_use_id"], result["is_error"]) == ("tool_result", "toolu_01", False)
    assert "hello from the notes" in result["content"]


async def test_parallel_tool_calls_are_answered_in_one_message_in_call_order(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """Three tool calls in one message get their three results in one user message, in call order."""
    (env.workdir / "a.txt").write_text("alpha\n")
    (env.workdir / "b.txt").write_text("beta\n")
    calls = [
        ("toolu_a", "read", {"path": "a.txt"}),
        ("toolu_b", "read", {"path": "b.txt"}),
        ("toolu_g", "glob", {"pattern": "*.txt"}),
    ]
    api.script(
        message(text("Let me look."), *(tool_use(*call) for call in calls), stop_reason="tool_use"),
        message(text("a.txt says alpha, b.txt says beta.")),
    )
    events = await collect(make_core(provider, env), "What is in the text files?")

    done = finished(events)
    assert done.success, done.error
    assert done.answer == "a.txt says alpha, b.txt says beta."
    assert [e.call_id for e in only(events, ToolCallStarted)] == ["toolu_a", "toolu_b", "toolu_g"]
    assert sorted(e.call_id for e in only(events, ToolCallFinished)) == ["toolu_a", "toolu_b", "toolu_g"]

    assert len(api.requests) == 2
    messages = api.requests[1].messages
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["content"] == [
        {"type": "text", "text": "Let me look."},
        *({"type": "tool_use", "id": i, "name": n, "input": a} for i, n, a in calls),
    ]
    results = messages[2]["content"]
    assert [(r["type"], r["tool_use_id"], r["is_error"]) for r in results] == [
        ("tool_result", "toolu_a", False),
        ("tool_result", "toolu_b", False),
        ("tool_result", "toolu_g", False),
    ]
    assert "alpha" in results[0]["content"]
    assert "beta" in results[1]["content"]
    assert "a.txt" in results[2]["content"]
    assert "b.txt" in results[2]["content"]


async def test_turn_limit_stops_a_model_that_always_calls_tools(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A model that never stops calling tools is stopped after max_steps turns with reason max_turns."""
    api.script(*(message(tool_use(f"toolu_{n}", "glob", {"pattern": "*"}), stop_reason="tool_use") for n in range(6)))
    events = await collect(make_core(provider, env, config(max_steps=3)), "Loop forever.")

    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "max_turns", 3)
    assert "3 turns" in done.error
    assert [e.turn for e in only(events, TurnStarted)] == [1, 2, 3]
    assert len(only(events, ToolCallFinished)) == 3
    assert len(api.requests) == 3
    assert api.pending == 3


async def test_tool_call_with_invalid_streamed_json_gets_an_error_result_and_the_run_goes_on(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A tool call whose streamed input is not JSON gets an error result the model reads; the run goes on."""
    (env.workdir / "a.txt").write_text("alpha\n")
    api.script(
        message(
            tool_use("toolu_bad", "read", raw_json='{"path": "a.txt", "limit": ', pieces=3),
            stop_reason="tool_use",
        ),
        message(text("My call was malformed; never mind.")),
    )
    events = await collect(make_core(provider, env), "Read a.txt.")

    done = finished(events)
    assert done.success, done.error
    assert done.answer == "My call was malformed; never mind."
    call = only(events, ToolCallFinished)[0]
    assert call.is_error
    assert "not valid JSON" in call.output

    messages = api.requests[1].messages
    # The call goes back with an object for its input (the API rejects anything else) ...
    assert messages[1] == {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_bad", "name": "read", "input": {}}],
    }
    # ... and its result says what was wrong.
    result = messages[2]["content"][0]
    assert (result["tool_use_id"], result["is_error"]) == ("toolu_bad", True)
    assert "not valid JSON" in result["content"]
    assert '{"path": "a.txt", "limit": ' in result["content"]


async def test_message_completed_is_the_message_that_goes_back_to_the_model(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """The message_completed event shows the assistant message exactly as it is sent back to the model."""
    api.script(
        message(tool_use("toolu_bad", "read", raw_json='{"path": '), stop_reason="tool_use"),
        message(text("Done.")),
    )
    events = await collect(make_core(provider, env), "Read something.")
    assert finished(events).success
    assert only(events, MessageCompleted)[0].message == api.requests[1].messages[1]


async def test_coding_agent_run_publishes_every_event_and_returns_the_result(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """CodingAgent.run over the real client returns the answer and puts every event on the bus."""
    api.script(message(text("Hi there.")))
    agent = CodingAgent(provider, config=config())
    seen: list[StepEvent] = []
    agent.bus.subscribe(seen.append)
    result = await agent.arun("Say hi.", env)
    await agent.bus.close()

    assert (result.success, result.reason, result.answer, result.steps) == (True, "completed", "Hi there.", 1)
    assert result.cost > 0
    assert kinds(seen)[0] == "run_started"
    assert kinds(seen)[-1] == "run_finished"
    assert "".join(e.text for e in only(seen, TextDelta)) == "Hi there."
    assert [e.seq for e in seen] == list(range(1, len(seen) + 1))
