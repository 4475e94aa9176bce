"""A stream whose content blocks break the Messages API's rules is a protocol error, never a message.

Each block is started once at its own index, gets deltas of its own kind until it stops, and a tool call
carries a string id of its own and a name; the message holds nothing after ``message_stop``. A server
that breaks one of these (a ``tool_use`` without an id, an index started twice, a delta for a block never
started...) fails the run at once with one line naming ANTHROPIC_BASE_URL, as other protocol errors do:
the call is never run, nothing is silently replaced, and the session resumes as if that answer never came.
"""

from __future__ import annotations

import copy
import json
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.providers.anthropic import AnthropicProvider
from tests.anthropic_harness import collect, finished, make_core, open_provider, retries, workspace
from tests.cli_runner import run_here
from tests.fake_anthropic import Event, FakeAnthropic, Reply, message, text, tool_use

Events = list[Event]


@pytest.fixture
async def provider(api: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    async with open_provider(api.url) as p:
        yield p


@pytest.fixture
def env(tmp_path: Path) -> Iterator[LocalEnvironment]:
    with workspace(tmp_path) as e:
        yield e


def writing() -> Events:
    """A sound answer: text (block 0), then a call writing a.txt (block 1)."""
    call = tool_use("toolu_1", "write", {"path": "a.txt", "content": "written\n"})
    return message(text("I will write it."), call, stop_reason="tool_use").events


def data(events: Events, kind: str, index: int | None = None, nth: int = 0) -> dict[str, Any]:
    """The ``nth`` event of ``kind`` (for block ``index``, if given), to change in place."""
    found = [
        payload
        for name, payload in events
        if name == kind and isinstance(payload, dict) and (index is None or payload.get("index") == index)
    ]
    return found[nth]


def at(events: Events, kind: str, index: int | None = None) -> int:
    """Where the first event of ``kind`` (for block ``index``) is in ``events``."""
    return events.index((kind, data(events, kind, index)))


def block(events: Events, index: int) -> dict[str, Any]:
    """The content block that block ``index``'s start event carries, to change in place."""
    started: dict[str, Any] = data(events, "content_block_start", index)["content_block"]
    return started


def drop_key(events: Events, key: str) -> None:
    del block(events, 1)[key]


def set_id(value: object) -> Callable[[Events], None]:
    return lambda events: block(events, 1).__setitem__("id", value)


def set_index(value: object) -> Callable[[Events], None]:
    def change(events: Events) -> None:
        for name, payload in events:
            if isinstance(payload, dict) and payload.get("index") == 1 and name.startswith("content_block"):
                payload["index"] = value

    return change


def start_block_zero_again(events: Events) -> None:
    """Block 1 (the call) sent at index 0 again: it would replace the text."""
    set_index(0)(events)


def delta_for_unstarted_block(events: Events) -> None:
    delta = {"type": "content_block_delta", "index": 7, "delta": {"type": "text_delta", "text": "stray"}}
    events.insert(at(events, "message_delta"), ("content_block_delta", delta))


def stop_for_unstarted_block(events: Events) -> None:
    events.insert(at(events, "message_delta"), ("content_block_stop", {"type": "content_block_stop", "index": 7}))


def delta_after_stop(events: Events) -> None:
    delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": " more"}}
    events.insert(at(events, "message_delta"), ("content_block_delta", delta))


def second_call_same_id(events: Events) -> None:
    call = tool_use("toolu_1", "write", {"path": "b.txt", "content": "also\n"})
    start = {"type": "content_block_start", "index": 2, "content_block": call.start}
    extra: Events = [("content_block_start", start)]
    extra += [("content_block_delta", {"type": "content_block_delta", "index": 2, "delta": d}) for d in call.deltas]
    extra.append(("content_block_stop", {"type": "content_block_stop", "index": 2}))
    spot = at(events, "message_delta")
    events[spot:spot] = extra


def message_start_again(events: Events) -> None:
    events.insert(at(events, "content_block_start", 1), copy.deepcopy(events[0]))


def block_after_message_stop(events: Events) -> None:
    start = {"type": "content_block_start", "index": 5, "content_block": {"type": "text", "text": "late"}}
    events.append(("content_block_start", start))


def call_left_open(events: Events) -> None:
    events.remove(("content_block_stop", data(events, "content_block_stop", 1)))


def text_delta_into_the_call(events: Events) -> None:
    delta = data(events, "content_block_delta", 1)
    delta["delta"] = {"type": "text_delta", "text": "not json"}


def block_that_is_a_list(events: Events) -> None:
    data(events, "content_block_start", 1)["content_block"] = [["type", "tool_use"], ["id", "x"], ["name", "write"]]


CASES: dict[str, tuple[Callable[[Events], None], str]] = {
    "tool_use without an id": (lambda e: drop_key(e, "id"), "its tool_use block 1 has no id"),
    "tool_use id a number": (set_id(5), "its tool_use block 1 has no id"),
    "tool_use id null": (set_id(None), "its tool_use block 1 has no id"),
    "tool_use id empty": (set_id(""), "its tool_use block 1 has no id"),
    "tool_use without a name": (lambda e: drop_key(e, "name"), "its tool_use block 1 has no name"),
    "a block index started twice": (start_block_zero_again, "content block 0 started twice"),
    "an index as text": (set_index("1"), "a content block index that is not a whole number from 0: '1'"),
    "an index negative": (set_index(-1), "a content block index that is not a whole number from 0: -1"),
    "an index fractional": (set_index(1.5), "a content block index that is not a whole number from 0: 1.5"),
    "an index true": (set_index(True), "a content block index that is not a whole number from 0: True"),
    "a delta for a block never started": (delta_for_unstarted_block, "content block 7 got a delta before it started"),
    "a stop for a block never started": (stop_for_unstarted_block, "content block 7 got a stop before it started"),
    "a delta after its block stopped": (delta_after_stop, "content block 0 got a delta after it stopped"),
    "two calls with one id": (second_call_same_id, "its tool_use blocks 1 and 2 have the same id 'toolu_1'"),
    "a second message_start": (message_start_again, "a second message_start"),
    "a block after message_stop": (block_after_message_stop, "'content_block_start' after message_stop"),
    "a text delta into a call": (text_delta_into_the_call, "a text_delta for content block 1, a tool_use block"),
    "a block that is not an object": (block_that_is_a_list, "content block 1 is not an object with a type"),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_a_stream_breaking_the_block_rules_is_a_protocol_error(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, case: str
) -> None:
    """The run fails at once as a protocol error, in one line naming the fault and ANTHROPIC_BASE_URL; one
    request, no retry, and the call is never run."""
    change, words = CASES[case]
    events = copy.deepcopy(writing())
    change(events)
    api.script(Reply(events=events))
    run = await collect(make_core(provider, env), "Write a.txt.")

    done = finished(run)
    assert (done.success, done.reason) == (False, "protocol")
    assert done.error == (
        f"the server's stream does not follow the Messages API ({words}); "
        "check that ANTHROPIC_BASE_URL points at a server that speaks it"
    )
    assert (len(api.requests), retries(run)) == (1, [])
    assert not (env.workdir / "a.txt").exists()


def test_the_session_resumes_as_if_the_broken_answer_never_came(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """`chimera run` meets a tool call without an id: exit 2 and one line; resumed, the conversation sent holds
    the task and nothing of the broken answer, and the run goes on."""
    events = writing()
    drop_key(events, "id")
    api.script(Reply(events=events))
    first = run_here("run", "Write a.txt.", "--workdir", str(project), "--json", "--permission-mode", "bypass")
    assert first.returncode == 2
    assert first.stderr.count("\n") == 1
    assert "its tool_use block 1 has no id" in first.stderr
    assert "ANTHROPIC_BASE_URL" in first.stderr
    assert not (project / "a.txt").exists()

    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    api.script(message(text("Done now.")))
    again = run_here("run", "go on", "--resume", session_id, "--workdir", str(project))
    assert again.returncode == 0, again.stderr
    sent = api.requests[-1].messages
    assert [m["role"] for m in sent] == ["user"]
    assert "Write a.txt." in json.dumps(sent)
    assert "I will write it." not in json.dumps(sent)


async def test_a_call_left_open_at_message_stop_ends_with_the_message(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A server that never sends the call's content_block_stop: the call ends with the message, its input read
    whole as its stop would have read it, and it runs."""
    events = writing()
    call_left_open(events)
    api.script(Reply(events=events), message(text("Wrote it.")))
    run = await collect(make_core(provider, env), "Write a.txt.")

    assert finished(run).success
    assert (env.workdir / "a.txt").read_text() == "written\n"
