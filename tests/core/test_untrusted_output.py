"""What a model sends is untrusted input, over the real ``anthropic`` SDK against a loopback Messages API.

A surrogate pair split across two streamed deltas, lone surrogates, and ``NaN``,
``Infinity`` or ``1e400`` in a tool call's input: the text streams right, and
nothing strict JSON cannot carry reaches the context, the events or the session,
so every later request still encodes. A request body that cannot be encoded is
never retried as a network fault.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ProviderError
from chimera.core.events import MessageCompleted, StepEvent, TextDelta, ThinkingDelta, ToolCallFinished
from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.providers.base import ModelRequest
from chimera.core.sessions.store import SessionStore
from tests.anthropic_harness import collect, finished, make_core, only, open_provider, retries, workspace
from tests.cli_runner import chimera_command, run_here
from tests.fake_anthropic import Block, FakeAnthropic, message, text, tool_use

TASK = "Do the thing."
EMOJI = "\U0001f600"
HIGH, LOW = "\ud83d", "\ude00"  # EMOJI in UTF-16, each half sent alone as a \u escape
SIGNATURE = "EqQBCkYIBxgCKkBz+/0Ab9x==" + "s" * 40


@pytest.fixture
async def provider(api: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    async with open_provider(api.url) as p:
        yield p


@pytest.fixture
def env(tmp_path: Path) -> Iterator[LocalEnvironment]:
    with workspace(tmp_path) as e:
        yield e


def pieces(kind: str, *parts: str, signature: str | None = None) -> Block:
    """A text or thinking block streamed as exactly ``parts`` (a lone surrogate goes out as its \\u escape)."""
    deltas: list[dict[str, Any]] = [{"type": f"{kind}_delta", kind: part} for part in parts]
    start: dict[str, Any] = {"type": kind, kind: ""}
    if signature is not None:
        start["signature"] = ""
        deltas.append({"type": "signature_delta", "signature": signature})
    return Block(kind, start, deltas)


def strict(raw: bytes) -> Any:
    """``raw`` decoded as UTF-8 and parsed as strict JSON (no NaN, no Infinity), or an AssertionError."""

    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in what should be strict JSON")

    return json.loads(raw.decode("utf-8"), parse_constant=refuse)


def assert_strict_events(events: list[StepEvent]) -> None:
    """Every event encodes as strict JSON in UTF-8: what `--json` prints and events.jsonl keeps."""
    for event in events:
        json.dumps(event.to_dict(), ensure_ascii=False, allow_nan=False).encode("utf-8")


async def test_an_emoji_split_across_two_text_deltas_streams_whole(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """An emoji sent as two escaped halves in two text deltas streams as the emoji, and the answer holds it."""
    api.script(message(pieces("text", "Done " + HIGH, LOW + "!")))
    events = await collect(make_core(provider, env), TASK)

    assert [e.text for e in only(events, TextDelta)] == ["Done ", EMOJI + "!"]
    done = finished(events)
    assert (done.success, done.answer) == (True, f"Done {EMOJI}!")
    assert_strict_events(events)


async def test_a_thinking_block_split_mid_pair_goes_back_joined_with_its_signature(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """Thinking whose emoji is split across deltas streams whole and goes back as one character, signature unchanged."""
    api.script(
        message(
            pieces("thinking", "I think " + HIGH, LOW + " so.", signature=SIGNATURE),
            tool_use("t1", "glob", {"pattern": "*.txt"}),
            stop_reason="tool_use",
        ),
        message(text("ok")),
    )
    events = await collect(make_core(provider, env), TASK)

    assert finished(events).success
    assert "".join(e.text for e in only(events, ThinkingDelta)) == f"I think {EMOJI} so."
    sent = strict(api.requests[1].raw)["messages"][1]["content"][0]
    assert sent == {"type": "thinking", "thinking": f"I think {EMOJI} so.", "signature": SIGNATURE}


async def test_lone_surrogates_become_replacement_characters_and_the_run_goes_on(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """Lone surrogates in text, thinking and tool inputs become U+FFFD: the tools run, the next request is sent."""
    api.script(
        message(
            pieces("thinking", "hm \udc00", signature=SIGNATURE),
            pieces("text", "Look \ud800", "here"),
            tool_use("t1", "bash", raw_json='{"command": "echo \\ud800 one"}'),  # escaped in the JSON text
            tool_use("t2", "bash", raw_json='{"command": "echo \udfff two"}'),  # a raw surrogate in partial_json
            tool_use("t3", "glob", {"pattern": "\ud83d.txt"}),  # a high half at the very end of a key's value
            stop_reason="tool_use",
        ),
        message(pieces("text", "All " + HIGH)),  # a high half the stream never completes
    )
    events = await collect(make_core(provider, env), TASK)

    done = finished(events)
    assert (done.success, done.answer) == (True, "All \ufffd")
    # A high half is held back until the next piece shows it has no pair.
    assert [e.text for e in only(events, TextDelta)] == ["Look ", "\ufffdhere", "All ", "\ufffd"]
    results = {e.call_id: e for e in only(events, ToolCallFinished)}
    assert results["t1"].output == "\ufffd one\n"
    assert results["t2"].output == "\ufffd two\n"
    assert not results["t3"].is_error
    assert len(api.requests) == 2
    assert retries(events) == []
    first_answer = strict(api.requests[1].raw)["messages"][1]["content"]
    assert first_answer[0]["thinking"] == "hm \ufffd"
    assert first_answer[1] == {"type": "text", "text": "Look \ufffdhere"}
    assert [b["input"] for b in first_answer[2:]] == [
        {"command": "echo \ufffd one"},
        {"command": "echo \ufffd two"},
        {"pattern": "\ufffd.txt"},
    ]
    assert_strict_events(events)


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e400"])
async def test_a_non_finite_number_in_a_tool_input_becomes_null(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, number: str
) -> None:
    """NaN, Infinity or 1e400 in a tool input is null in context and events; the model reads an error and goes on."""
    api.script(
        message(
            tool_use("t1", "bash", raw_json=f'{{"command": "echo hi", "timeout": {number}}}'),
            tool_use("t2", "glob", raw_json=f'{{"pattern": "*", "extra": [1, {{"deep": {number}}}]}}'),
            stop_reason="tool_use",
        ),
        message(text("Sorry, fixed.")),
    )
    core = make_core(provider, env)
    events = await collect(core, TASK)

    done = finished(events)
    assert (done.success, done.answer) == (True, "Sorry, fixed.")
    assert len(api.requests) == 2
    sent = strict(api.requests[1].raw)["messages"]
    assert [b["input"] for b in sent[1]["content"]] == [
        {"command": "echo hi", "timeout": None},
        {"pattern": "*", "extra": [1, {"deep": None}]},
    ]
    results = {e.call_id: e for e in only(events, ToolCallFinished)}
    assert results["t1"].is_error
    assert "'timeout' must be an integer, not null" in results["t1"].output
    first = only(events, MessageCompleted)[0].message
    assert first["content"][0]["input"]["timeout"] is None
    assert_strict_events(events)


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ('{"command": "ls", "timeout": ' + "9" * 5000 + "}", "not valid JSON"),
        ('{"command": "ls", "x": ' + "[" * 5000 + "]" * 5000 + "}", "nested more than 64 levels deep"),
    ],
    ids=["5000-digits", "5000-deep"],
)
async def test_tool_input_past_pythons_limits_is_a_malformed_call_the_model_reads(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, raw: str, why: str
) -> None:
    """An integer of 5,000 digits or arrays nested 5,000 deep: the call gets an error result, and the run goes on."""
    api.script(message(tool_use("t1", "bash", raw_json=raw), stop_reason="tool_use"), message(text("ok")))
    events = await collect(make_core(provider, env), TASK)

    assert (finished(events).success, len(api.requests)) == (True, 2)
    [result] = only(events, ToolCallFinished)
    assert result.is_error
    assert why in result.output


@pytest.mark.parametrize(
    "message_",
    [
        {"role": "user", "content": "a lone \ud800 surrogate"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x", "n": math.nan}]},
    ],
    ids=["lone-surrogate", "nan"],
)
async def test_a_body_that_cannot_be_encoded_fails_at_once_and_is_never_a_lost_connection(
    api: FakeAnthropic, provider: AnthropicProvider, message_: dict[str, Any]
) -> None:
    """A request body that cannot be encoded is an `encoding` error, not retryable, and nothing reaches the server."""
    request = ModelRequest(system="s", messages=[message_])
    with pytest.raises(ProviderError) as caught:
        async for _ in provider.stream(request):
            pass
    assert (caught.value.kind, caught.value.retryable) == ("encoding", False)
    assert "could not be encoded as JSON" in str(caught.value)
    assert "connection" not in str(caught.value)
    assert api.requests == []


def test_resuming_a_session_saved_with_nan_sends_strict_json(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """A session saved before the fix, with NaN and Infinity in a tool input, resumes: its request is strict JSON."""
    with SessionStore.create(isolated_env, "old1", workdir=tmp_path, model="claude-sonnet-4-6") as store:
        store.add("user", {"role": "user", "content": "go"}, sync=True)
        call = {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "ls", "timeout": math.nan}}
        weird = {"type": "tool_use", "id": "t2", "name": "glob", "input": {"pattern": "*", "x": math.inf}}
        store.add("assistant", {"role": "assistant", "content": [call, weird]}, sync=True)
        results = [
            {"type": "tool_result", "tool_use_id": i, "content": "Error: bad", "is_error": True} for i in ("t1", "t2")
        ]
        store.add("tool_result", {"role": "user", "content": results}, sync=True)
    assert b"NaN" in (isolated_env / "sessions" / "old1" / "entries.jsonl").read_bytes()  # as the old loop saved it

    api.script(message(text("Resumed.")))
    proc = run_here("run", "go on", "--resume", "old1", env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Resumed."
    assert len(api.requests) == 1
    sent = strict(api.requests[0].raw)["messages"]
    assert [b["input"] for b in sent[1]["content"]] == [{"command": "ls", "timeout": None}, {"pattern": "*", "x": None}]


def test_a_task_that_is_not_utf8_on_the_command_line_runs(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """Bytes that are not UTF-8 in `chimera run`'s task are U+FFFD in the request, the events and the event log."""
    api.script(message(text("ok")))
    env = {**os.environ, **model_env}
    command = [os.fsencode(part) for part in chimera_command()]
    proc = subprocess.run(
        [*command, b"run", b"caf\xe9 \xff", b"--json", b"--workdir", os.fsencode(tmp_path)],
        capture_output=True,
        env={k.encode(): v.encode() for k, v in env.items()},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert (proc.returncode, proc.stderr) == (0, b"")
    assert strict(api.requests[0].raw)["messages"] == [{"role": "user", "content": "caf\ufffd \ufffd"}]
    started = strict(proc.stdout.splitlines()[0])
    assert started["task"] == "caf\ufffd \ufffd"
    [log] = Path(os.environ["CHIMERA_HOME"]).glob("sessions/*/events.jsonl")
    assert strict(log.read_bytes().splitlines()[0])["task"] == "caf\ufffd \ufffd"
