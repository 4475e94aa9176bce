"""Benchmark: what reading a streamed reply costs the event loop, an event at a time.

Run by hand: `python tests/bench/bench_stream_read.py [events]` (3,000 by default; a few seconds
a way). The loopback Messages API server streams a reply of that many text deltas, each its own
write (as a model streams them), and the event loop's thread reads it three ways: Chimera's
provider (the body's bytes through `core/providers/sse.py`), the SDK's stream of raw JSON events
(`client.post(..., stream_cls=AsyncStream[object])`, what the provider did before), and the SDK's
typed events (`client.messages.create(stream=True)`). Prints the loop thread's CPU time an event
(`time.thread_time`: the server's own thread is not counted) and each against the provider's.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.providers.base import ModelRequest
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, message, paced, text

PACE = 0.0005  # seconds between events: each arrives on its own, as from a model
REQUEST = {"model": DEFAULT_MODEL, "max_tokens": 1000, "messages": [{"role": "user", "content": "go"}]}


async def _provider(api: FakeAnthropic) -> int:
    provider = AnthropicProvider(DEFAULT_MODEL, api_key="k", base_url=api.url)
    count = 0
    async for _ in provider.stream(ModelRequest(system="", messages=REQUEST["messages"])):
        count += 1
    await provider.aclose()
    return count


async def _sdk_raw(api: FakeAnthropic) -> int:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=api.url, max_retries=0)
    stream = await client.post(
        "/v1/messages",
        body={**REQUEST, "stream": True},
        cast_to=object,
        stream=True,
        stream_cls=anthropic.AsyncStream[object],
    )
    count = 0
    async with stream:
        async for _ in stream:
            count += 1
    await client.close()
    return count


async def _sdk_typed(api: FakeAnthropic) -> int:
    import anthropic

    client = anthropic.AsyncAnthropic(api_key="k", base_url=api.url, max_retries=0)
    count = 0
    async with await client.messages.create(**REQUEST, stream=True) as stream:  # type: ignore[call-overload]
        async for _ in stream:
            count += 1
    await client.close()
    return count


def _measure(api: FakeAnthropic, events: int, read: Callable[[FakeAnthropic], Awaitable[int]]) -> float:
    """The loop thread's CPU seconds an event, reading one streamed reply of ``events`` deltas."""
    words = "".join(f"w{n} " for n in range(events))
    api.script(paced(message(text(words, pieces=events)), PACE, threading.Event(), threading.Event()))

    async def run() -> float:
        start = time.thread_time()
        read_count = await read(api)
        assert read_count > 0
        return (time.thread_time() - start) / events

    return asyncio.run(run())


def main() -> None:
    events = int(sys.argv[1]) if len(sys.argv) > 1 else 3000
    ways = {"provider (own SSE reader)": _provider, "SDK raw JSON stream": _sdk_raw, "SDK typed events": _sdk_typed}
    with FakeAnthropic() as api:
        for read in ways.values():  # warm: imports, the first connection
            _measure(api, 50, read)
        cost = {name: min(_measure(api, events, read) for _ in range(3)) for name, read in ways.items()}
    base = cost["provider (own SSE reader)"]
    print(f"reading a reply of {events:,} text deltas, each its own write; the loop thread's CPU an event (best of 3):")
    for name, seconds in cost.items():
        print(f"  {name:28} {seconds * 1e6:7.1f} µs  ({seconds / base:.2f}×)")


if __name__ == "__main__":
    main()
