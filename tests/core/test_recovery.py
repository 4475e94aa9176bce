"""Staged recovery over the real ``anthropic`` SDK, against a loopback Messages API.

Each failure the server can produce: rate limits, overload, server errors, an
``error`` event mid-stream, a connection cut before ``message_stop``, a stalled
stream, a response cut by ``max_tokens``, a refusal, the requests that must not
be retried (400, 401, 404), an unreachable server and a spent retry budget.
A retried request carries the context as it was before the failed attempt,
and the failed attempt's partial text never reaches the answer or the context.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.errors import ProviderError
from chimera.core.events import MessageCompleted, RetryScheduled, StepEvent, TextDelta, TurnStarted
from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.providers.base import ModelRequest
from tests.anthropic_harness import (
    MODEL,
    collect,
    config,
    finished,
    make_core,
    only,
    open_provider,
    retries,
    workspace,
)
from tests.fake_anthropic import (
    FakeAnthropic,
    Reply,
    corrupt,
    dropped,
    message,
    page,
    stalled,
    status,
    stream_error,
    text,
    tool_use,
)

TASK = "List the text files, then say you are done."
PARTIAL = "PARTIAL-DRAFT that must vanish"
CONTINUE = "Your last response was cut off by the output limit. Continue exactly where it stopped."
HANG_GUARD = 2.0  # seconds before a run that never ends counts as hung (a passing run takes milliseconds)


@pytest.fixture
async def provider(api: FakeAnthropic) -> AsyncIterator[AnthropicProvider]:
    async with open_provider(api.url) as p:
        yield p


@pytest.fixture
def env(tmp_path: Path) -> Iterator[LocalEnvironment]:
    with workspace(tmp_path) as e:
        yield e


def recovered() -> tuple[Reply, Reply]:
    """What the server says once it works again: a tool call, then the final answer."""
    return (
        message(
            text("Listing them."),
            tool_use("toolu_glob", "glob", {"pattern": "*.txt"}),
            stop_reason="tool_use",
        ),
        message(text("All done.")),
    )


def assert_recovered(api: FakeAnthropic, events: list[StepEvent], *, failed: int) -> None:
    """The run succeeded with the answer of the attempts that worked; nothing of the failed ones survives."""
    done = finished(events)
    assert done.success, done.error
    assert (done.reason, done.answer, done.steps) == ("completed", "All done.", 2)
    assert [e.turn for e in only(events, TurnStarted)] == [1, 2]  # a retry is not a new turn

    assert len(api.requests) == failed + 2
    context = [{"role": "user", "content": TASK}]
    for request in api.requests[: failed + 1]:
        assert request.messages == context  # every retry sends the context as it was before the failure
    last = api.requests[-1].messages
    assert [m["role"] for m in last] == ["user", "assistant", "user"]
    assert last[1]["content"] == [
        {"type": "text", "text": "Listing them."},
        {"type": "tool_use", "id": "toolu_glob", "name": "glob", "input": {"pattern": "*.txt"}},
    ]
    assert [r["tool_use_id"] for r in last[2]["content"]] == ["toolu_glob"]
    for request in api.requests:
        assert b"PARTIAL" not in request.raw
    completed = only(events, MessageCompleted)
    assert len(completed) == 2
    assert all("PARTIAL" not in str(e.message) for e in completed)


def streamed_before_retry(events: list[StepEvent]) -> str:
    """The text streamed before the first retry event: what the failed attempt showed, then voided."""
    first_retry = events.index(only(events, RetryScheduled)[0])
    return "".join(e.text for e in events[:first_retry] if isinstance(e, TextDelta))


# --- retried ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("header", "value", "wait"),
    [("retry-after", "0.25", 0.25), ("retry-after-ms", "150", 0.15)],
)
async def test_rate_limit_waits_as_long_as_the_server_asks(
    api: FakeAnthropic,
    provider: AnthropicProvider,
    env: LocalEnvironment,
    header: str,
    value: str,
    wait: float,
) -> None:
    """A 429 is retried after exactly the wait the server's retry-after header asks for."""
    api.script(
        status(
            429,
            "rate_limit_error",
            "Number of requests has exceeded your rate limit",
            headers={header: value},
        )
    )
    api.script(*recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == [("rate_limit", 1, wait)]
    assert "429" in only(events, RetryScheduled)[0].detail
    assert_recovered(api, events, failed=1)


async def test_overloaded_529_is_retried_with_backoff(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 529 overloaded answer is retried after the first backoff wait."""
    api.script(status(529, "overloaded_error", "Overloaded"), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == [("overloaded", 1, 0.01)]
    assert_recovered(api, events, failed=1)


async def test_overloaded_529_waits_as_long_as_the_server_asks(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 529 with a retry-after header is retried after exactly that wait, not the backoff."""
    api.script(status(529, "overloaded_error", "Overloaded", headers={"retry-after": "0.2"}), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == [("overloaded", 1, 0.2)]
    assert "529" in only(events, RetryScheduled)[0].detail
    assert_recovered(api, events, failed=1)


async def test_server_error_500_is_retried_with_doubling_backoff(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """500s are retried, each wait twice the one before."""
    api.script(status(500, "api_error", "Internal server error"), status(500, "api_error", "Internal server error"))
    api.script(*recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == [("server", 1, 0.01), ("server", 2, 0.02)]
    assert "500" in only(events, RetryScheduled)[0].detail
    assert_recovered(api, events, failed=2)


async def test_error_event_mid_stream_is_retried_and_its_partial_text_dropped(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """An overloaded_error event after some text is retried; that text reaches neither answer nor context."""
    api.script(stream_error(text(PARTIAL, pieces=3), error_type="overloaded_error"), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert streamed_before_retry(events) == PARTIAL  # shown live, then voided by the retry event
    assert retries(events) == [("stream_error", 1, 0.01)]
    assert "overloaded_error" in only(events, RetryScheduled)[0].detail
    assert_recovered(api, events, failed=1)


@pytest.mark.parametrize(
    "framing",
    [
        "close",
        "chunked",
    ],
)
async def test_connection_closed_before_message_stop_is_retried(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, framing: str
) -> None:
    """A stream whose connection closes before message_stop is retried; its partial text is dropped."""
    api.script(dropped(text(PARTIAL), framing=framing), *recovered())
    events = await collect(make_core(provider, env), TASK, within=HANG_GUARD)

    assert streamed_before_retry(events) == PARTIAL
    [(reason, attempt, wait)] = retries(events)
    assert reason in {"incomplete", "connection"}
    assert (attempt, wait) == (1, 0.01)
    assert_recovered(api, events, failed=1)


@pytest.mark.parametrize("silent", [False, True], ids=["after-message-start", "before-headers"])
async def test_stalled_stream_is_abandoned_and_retried(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, silent: bool
) -> None:
    """A stream that goes quiet for stall_timeout is abandoned and retried."""
    api.script(stalled(text(PARTIAL), silent=silent), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == [("stalled", 1, 0.01)]
    assert "stalled" in only(events, RetryScheduled)[0].detail
    if not silent:
        assert streamed_before_retry(events) == PARTIAL
    assert_recovered(api, events, failed=1)


async def test_retry_budget_spent_fails_after_max_retries_plus_one_requests(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """When every attempt fails, the run fails after max_retries + 1 requests and says why."""
    api.script(*(status(500, "api_error", "Internal server error") for _ in range(3)), message(text("too late")))
    events = await collect(make_core(provider, env, config(max_retries=2)), TASK)

    assert retries(events) == [("server", 1, 0.01), ("server", 2, 0.02)]
    done = finished(events)
    assert (done.success, done.reason) == (False, "server")
    assert "500" in done.error
    assert "Internal server error" in done.error
    assert len(api.requests) == 3
    assert api.pending == 1


async def test_retry_after_longer_than_allowed_fails_at_once(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 429 asking for a wait past max_retry_after fails the run at once, saying to try again later."""
    api.script(status(429, "rate_limit_error", "Slow down", headers={"retry-after": "600"}), *recovered())
    events = await collect(make_core(provider, env, config(max_retry_after=300.0)), TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason) == (False, "rate_limit")
    assert "600s" in done.error
    assert "try again later" in done.error
    assert len(api.requests) == 1


async def test_a_server_never_reached_fails_at_once_by_default(env: LocalEnvironment) -> None:
    """With the default retry policy, nothing listening at the URL is a setup error: one attempt, no retry."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        async with open_provider(url) as provider:
            events = await collect(make_core(provider, env, config()), TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason) == (False, "unreachable")
    assert url in done.error


async def test_a_bug_while_streaming_is_not_retried_as_a_network_fault(
    api: FakeAnthropic, env: LocalEnvironment, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error that is not the network's (here a RuntimeError in assembling the answer) fails once, unretried."""
    from chimera.core.providers.message_builder import MessageBuilder

    def broken(self: object, event: object) -> None:
        raise RuntimeError("a bug in Chimera")

    monkeypatch.setattr(MessageBuilder, "feed", broken)
    api.script(message(text("Hello.")), message(text("Hello.")))
    async with open_provider(api.url) as provider:
        events = await collect(make_core(provider, env), TASK)

    assert retries(events) == []
    done = finished(events)
    assert done.success is False
    assert "a bug in Chimera" in done.error
    assert len(api.requests) == 1


async def test_unreachable_server_is_retried_then_fails_naming_the_url(env: LocalEnvironment) -> None:
    """A base URL where nothing listens is tried unreachable_retries more times, then fails saying where."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))  # bound, never listening: connections are refused
        url = f"http://127.0.0.1:{closed.getsockname()[1]}"
        async with open_provider(url) as provider:
            events = await collect(make_core(provider, env, config(unreachable_retries=2)), TASK)

    assert retries(events) == [("unreachable", 1, 0.01), ("unreachable", 2, 0.02)]
    done = finished(events)
    assert (done.success, done.reason) == (False, "unreachable")
    assert url in done.error
    assert "ANTHROPIC_BASE_URL" in done.error


# --- not the Messages API -------------------------------------------------------------------

HTML = "<!doctype html>\n<html><head><title>Welcome</title></head>\n<body><p>It works.</p></body></html>\n"


@pytest.mark.parametrize(
    ("reply", "what"),
    [
        (page(HTML), "an HTML page (HTTP 200)"),
        (page("Ollama is running", content_type="text/plain; charset=utf-8"), "plain text (HTTP 200)"),
        (page('{"object": "list", "data": []}', content_type="application/json"), "a JSON document (HTTP 200)"),
        (page("<html><body><h1>404 Not Found</h1>\n</body></html>", code=404), "an HTML page (HTTP 404)"),
        (page("404 page not found", code=404, content_type="text/plain"), "plain text (HTTP 404)"),
        (page("<html>Method Not Allowed</html>", code=405), "an HTML page (HTTP 405)"),
        (
            Reply(events=[("message", '{"choices": [{"delta": {"content": "hi"}}]}')]),
            "an event stream that does not begin with message_start (HTTP 200)",
        ),
        (Reply(events=[]), "an event stream with no message in it (HTTP 200)"),
    ],
    ids=["html", "text", "json", "html-404", "text-404", "html-405", "other-events", "no-events"],
)
async def test_a_server_that_does_not_speak_the_messages_api_is_a_setup_error_at_once(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment, reply: Reply, what: str
) -> None:
    """A response that is not the Messages API fails the run at once (protocol), naming the URL and the fix."""
    api.fallback = reply
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason) == (False, "protocol")
    assert done.error == (
        f"{api.url}/v1/messages answered with {what}, not the Messages API: "
        "check ANTHROPIC_BASE_URL (Chimera adds /v1/messages to it)"
    )
    assert len(api.requests) == 1


async def test_a_proxys_error_page_is_retried_and_said_in_one_line(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 502 HTML page from a proxy in front of the API is retried like any 5xx, its page never in the message."""
    api.script(page("<html>\n<head><title>502 Bad Gateway</title></head>\n<body>nginx</body>\n</html>", code=502))
    api.script(*recovered())
    events = await collect(make_core(provider, env), TASK)

    [retry] = only(events, RetryScheduled)
    assert (retry.reason, retry.detail) == ("server", "the server failed (502): an HTML page")
    assert_recovered(api, events, failed=1)


# --- continued --------------------------------------------------------------------------


async def test_answer_cut_by_max_tokens_is_continued(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """An answer cut off by max_tokens is kept and continued, announced by a max_tokens retry event."""
    api.script(message(text("Hello, wor"), stop_reason="max_tokens"), message(text("ld!")))
    events = await collect(make_core(provider, env), "Greet the world.")

    assert retries(events) == [("max_tokens", 1, 0.0)]
    done = finished(events)
    assert done.success, done.error
    assert done.steps == 2
    assert len(api.requests) == 2
    assert api.requests[1].messages == [
        {"role": "user", "content": "Greet the world."},
        {"role": "assistant", "content": [{"type": "text", "text": "Hello, wor"}]},
        {"role": "user", "content": CONTINUE},
    ]
    assert "".join(e.text for e in only(events, TextDelta)) == "Hello, world!"


async def test_answer_continued_after_max_tokens_is_whole(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """The final answer of a continued response is the whole text, not just the continuation."""
    api.script(message(text("Hello, wor"), stop_reason="max_tokens"), message(text("ld!")))
    events = await collect(make_core(provider, env), "Greet the world.")
    assert finished(events).answer == "Hello, world!"


async def test_answer_that_keeps_hitting_max_tokens_fails(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """An answer still cut off after max_continuations continuations fails with reason max_tokens."""
    api.script(*(message(text(f"part {n} "), stop_reason="max_tokens") for n in range(3)))
    events = await collect(make_core(provider, env, config(max_continuations=1)), "Write a lot.")

    assert retries(events) == [("max_tokens", 1, 0.0)]
    done = finished(events)
    assert (done.success, done.reason) == (False, "max_tokens")
    assert len(api.requests) == 2


# --- not retried -------------------------------------------------------------------------


async def test_refusal_ends_the_run_without_retry_and_leaves_the_declined_task_out(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A refusal ends the run with reason refusal, is not retried, is not added to the conversation, and the task it
    declined leaves the conversation too: the next task is sent alone."""
    api.script(message(text("I can't help with that."), stop_reason="refusal"), *recovered())
    core = make_core(provider, env)
    events = await collect(core, TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason, done.left_out) == (False, "refusal", "declined")
    assert "declined" in done.error
    assert len(api.requests) == 1
    assert core.messages == []
    await collect(core, "something else")
    assert api.requests[1].messages == [{"role": "user", "content": "something else"}]


async def test_bad_request_400_fails_at_once_with_the_servers_reason(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 400 is not retried: one request, and the run fails (bad_request) with the server's message."""
    api.script(status(400, "invalid_request_error", "messages.0.content: field required"), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason) == (False, "bad_request")
    assert "400" in done.error
    assert "messages.0.content: field required" in done.error
    assert len(api.requests) == 1


async def test_a_servers_error_text_becomes_one_clean_line(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 400 whose message spans lines and holds a lone surrogate fails with that message on one clean line."""
    api.script(status(400, "invalid_request_error", "messages: bad\n  at line 3\r\n\ud800 here" + "x" * 1000))
    events = await collect(make_core(provider, env), TASK)

    done = finished(events)
    assert done.error.startswith("the server refused the request (400): messages: bad at line 3 \ufffd herexxx")
    assert done.error.endswith("x…")
    assert len(done.error) < 400
    done.error.encode("utf-8")  # no lone surrogate left


async def test_rejected_key_401_fails_pointing_at_the_api_key(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 401 is not retried: the run fails with reason auth and says to set ANTHROPIC_API_KEY."""
    api.script(status(401, "authentication_error", "invalid x-api-key"), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason) == (False, "auth")
    assert "ANTHROPIC_API_KEY" in done.error
    assert "401" in done.error
    assert len(api.requests) == 1


async def test_unknown_model_404_fails_naming_the_model(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A 404 is not retried: the run fails with reason not_found and names the model."""
    api.script(status(404, "not_found_error", f"model: {MODEL}"), *recovered())
    events = await collect(make_core(provider, env), TASK)

    assert retries(events) == []
    done = finished(events)
    assert (done.success, done.reason) == (False, "not_found")
    assert repr(MODEL) in done.error
    assert len(api.requests) == 1


# --- failures that must not hang the run -----------------------------------------------------


async def test_provider_reports_a_stream_cut_mid_chunk_as_a_retryable_error(api: FakeAnthropic) -> None:
    """A stream cut in the middle of its chunked body surfaces as a retryable ProviderError."""
    api.script(dropped(text(PARTIAL), framing="chunked"))
    async with open_provider(api.url) as provider:
        request = ModelRequest(system="s", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.stream(request):
                pass
    assert caught.value.retryable
    assert caught.value.kind == "connection"


async def test_corrupt_stream_event_ends_the_run_instead_of_hanging(
    api: FakeAnthropic, provider: AnthropicProvider, env: LocalEnvironment
) -> None:
    """A stream event that is not JSON ends the run with a failure instead of leaving it hanging."""
    api.script(corrupt(text(PARTIAL)))
    events = await collect(make_core(provider, env), TASK, within=HANG_GUARD)

    done = finished(events)
    assert not done.success
    assert done.error
