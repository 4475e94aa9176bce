"""The server-sent events reader: however the network cuts the body, the same events come out, in order."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chimera.core.errors import ProviderError
from chimera.core.providers import sse
from chimera.core.providers.api_errors import stream_error
from chimera.core.providers.base import ModelRequest
from chimera.core.providers.sse import EventReader, EventTooLarge, ServerSentEvent
from tests.anthropic_harness import open_provider
from tests.fake_anthropic import FakeAnthropic, message, text

BODY = (
    b": a comment the server sends to keep the line open\n"
    b"event: message_start\n"
    b'data: {"type": "message_start"}\n'
    b"\n"
    b"event: ping\n"
    b"data: {}\n"
    b"\n"
    b"event: content_block_delta\n"
    b'data: {"text": "caf\xc3\xa9 \xe2\x9c\x93"}\n'
    b"\n"
    b"event: multi\n"
    b"data: first\n"
    b"data:second\n"
    b"id: 7\n"
    b"retry: 100\n"
    b"\n"
    b"data: unnamed\n"
    b"\n"
    b"event: never ended\n"
    b"data: dropped with the stream's end\n"
)
EVENTS = [
    ServerSentEvent("message_start", '{"type": "message_start"}'),
    ServerSentEvent("ping", "{}"),
    ServerSentEvent("content_block_delta", '{"text": "café ✓"}'),
    ServerSentEvent("multi", "first\nsecond"),
    ServerSentEvent(None, "unnamed"),
]


def read(chunks: list[bytes]) -> list[ServerSentEvent]:
    reader = EventReader()
    events = [event for chunk in chunks for event in reader.feed(chunk)]
    return events + reader.close()


def cut(body: bytes, at: list[int]) -> list[bytes]:
    points = [0, *sorted(at), len(body)]
    return [body[a:b] for a, b in itertools.pairwise(points)]


@given(st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=12))
def test_the_events_are_the_same_however_the_body_is_cut(at: list[int]) -> None:
    assert read(cut(BODY, at)) == EVENTS


@pytest.mark.parametrize("end", [b"\r\n", b"\r"], ids=["crlf", "cr"])
@given(at=st.lists(st.integers(min_value=0, max_value=len(BODY)), max_size=6))
def test_lines_may_end_in_crlf_or_cr(end: bytes, at: list[int]) -> None:
    body = BODY.replace(b"\n", end)
    assert read(cut(body, at)) == EVENTS


def test_an_event_ended_by_the_last_cr_of_the_body_is_read() -> None:
    assert read([b"event: done\rdata: x\r\r"]) == [ServerSentEvent("done", "x")]


def test_a_line_that_is_not_utf8_is_a_broken_stream() -> None:
    with pytest.raises(UnicodeDecodeError):
        EventReader().feed(b"data: \xff\xfe\n\n")


@pytest.mark.parametrize(
    ("data", "says", "retried"),
    [
        (
            '{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}',
            "(overloaded_error): Overloaded",
            True,
        ),
        ('{"type": "error", "error": {"type": "invalid_request_error", "message": "bad\\nthing"}}', "bad thing", False),
        ("the proxy gave up\n\twith a tab", "(no type): the proxy gave up with a tab", False),
        ("", "(no type): no details", False),
    ],
    ids=["overloaded", "invalid", "not-json", "empty"],
)
def test_an_error_event_is_one_line_naming_the_servers_error(data: str, says: str, retried: bool) -> None:
    error = stream_error(data)
    assert isinstance(error, ProviderError)
    assert (error.kind, error.retryable) == ("stream_error", retried)
    assert says in str(error)
    assert "\n" not in str(error)


def test_a_line_or_an_event_past_the_limit_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server that never ends a line, or an event, cannot fill the memory: past the limit it is refused."""
    monkeypatch.setattr(sse, "LIMIT", 1000)
    reader = EventReader()
    for _ in range(9):
        assert reader.feed(b"x" * 100) == []  # a line arriving in pieces is kept as it comes
    with pytest.raises(EventTooLarge, match="a line of more than"):
        reader.feed(b"x" * 200)
    reader = EventReader()
    with pytest.raises(EventTooLarge, match="an event of more than"):
        reader.feed(b"event: big\n" + b"data: " + b"y" * 600 + b"\n" + b"data: " + b"y" * 600 + b"\n")


async def test_a_server_sending_an_event_past_the_limit_fails_at_once(
    api: FakeAnthropic, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the provider: one line naming the cause and ANTHROPIC_BASE_URL, not retried."""
    monkeypatch.setattr(sse, "LIMIT", 1000)
    api.script(message(text("z" * 5000, pieces=1)))
    async with open_provider(api.url) as provider:
        request = ModelRequest(system="s", messages=[{"role": "user", "content": "hi"}])
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.stream(request):
                pass
    assert (caught.value.kind, caught.value.retryable) == ("protocol", False)
    assert "an event of more than" in str(caught.value)
    assert "ANTHROPIC_BASE_URL" in str(caught.value)
