"""The bus delivers in order to every reader, and no reader can stall the loop or the others."""

from __future__ import annotations

import asyncio
import threading

import pytest

from chimera.core.bus import EventBus
from chimera.core.events import StepEvent, TextDelta


def _deltas(n: int) -> list[TextDelta]:
    return [TextDelta(text=str(i), seq=i) for i in range(n)]


async def test_callbacks_and_streams_see_every_event_in_order() -> None:
    """A sync callback and two async readers each get every event in publish order."""
    bus = EventBus()
    seen: list[int] = []
    bus.subscribe(lambda e: seen.append(e.seq))
    first, second = bus.stream(), bus.stream()
    for event in _deltas(500):
        bus.publish(event)
    await bus.close()
    assert seen == list(range(500))
    assert [e.seq async for e in first] == list(range(500))
    assert [e.seq async for e in second] == list(range(500))


async def test_a_raising_subscriber_keeps_its_place_and_harms_no_one() -> None:
    """A callback that raises still gets later events, and the others get all of them."""
    bus = EventBus()
    got: list[int] = []
    fine: list[int] = []

    def flaky(event: StepEvent) -> None:
        got.append(event.seq)
        if event.seq % 2 == 0:
            raise RuntimeError("boom")

    sub = bus.subscribe(flaky)
    bus.subscribe(lambda e: fine.append(e.seq))
    for event in _deltas(10):
        bus.publish(event)
    await bus.close()
    assert got == list(range(10))
    assert fine == list(range(10))
    assert sub.errors == 5


async def test_a_blocked_subscriber_never_stalls_publishing_or_others() -> None:
    """While one callback is stuck, publishing returns and the other readers keep up."""
    bus = EventBus()
    release = threading.Event()
    entered = threading.Event()
    blocked_seen: list[int] = []

    def stuck(event: StepEvent) -> None:
        entered.set()
        release.wait()
        blocked_seen.append(event.seq)

    bus.subscribe(stuck)
    reader = bus.stream()
    fast_seen: list[int] = []
    bus.subscribe(lambda e: fast_seen.append(e.seq))
    for event in _deltas(1000):
        bus.publish(event)  # returns although `stuck` is blocked
    assert await asyncio.to_thread(entered.wait, 10)
    taken = [(await anext(reader)).seq for _ in range(1000)]
    assert taken == list(range(1000))
    assert blocked_seen == []
    release.set()
    await bus.close()
    assert fast_seen == list(range(1000))
    assert blocked_seen == list(range(1000))


async def test_drain_waits_until_readers_have_handled_everything() -> None:
    """drain() returns only after each reader has processed what was published before it."""
    bus = EventBus()
    handled: list[int] = []
    reader = bus.stream()

    async def consume() -> None:
        async for event in reader:
            handled.append(event.seq)

    task = asyncio.create_task(consume())
    for event in _deltas(50):
        bus.publish(event)
    assert await bus.drain(timeout=10)
    assert handled == list(range(50))
    await bus.close()
    await task


async def test_drain_reports_a_reader_that_does_not_keep_up() -> None:
    """drain() with a timeout says False when a reader never reads, instead of hanging."""
    bus = EventBus()
    bus.stream()  # nobody reads it
    bus.publish(TextDelta(text="x"))
    assert await bus.drain(timeout=0.05) is False


async def test_batches_group_what_is_queued() -> None:
    """A batch reader gets everything queued so far in one list, in order."""
    bus = EventBus()
    reader = bus.stream()
    for event in _deltas(5):
        bus.publish(event)
    batches = reader.batches()
    first = await anext(batches)
    assert [e.seq for e in first] == [0, 1, 2, 3, 4]
    bus.publish(TextDelta(text="5", seq=5))
    assert [e.seq for e in await anext(batches)] == [5]
    await bus.close()
    with pytest.raises(StopAsyncIteration):
        await anext(batches)


async def test_events_published_from_another_thread_reach_async_readers() -> None:
    """A reader on the event loop gets events published by a worker thread, in order."""
    bus = EventBus()
    reader = bus.stream()
    await asyncio.to_thread(lambda: [bus.publish(e) for e in _deltas(100)])
    assert [(await anext(reader)).seq for _ in range(100)] == list(range(100))
    await bus.close()


async def test_cancelled_subscription_gets_nothing_more() -> None:
    """After cancel(), a reader stops receiving and its iteration ends."""
    bus = EventBus()
    reader = bus.stream()
    bus.publish(TextDelta(text="a", seq=1))
    reader.cancel()
    bus.publish(TextDelta(text="b", seq=2))
    assert [e.seq async for e in reader] == [1]
    await bus.close()
