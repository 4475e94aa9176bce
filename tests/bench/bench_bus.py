"""Benchmark: bus throughput, events a second delivered to three subscribers.

Run by hand: `python tests/bench/bench_bus.py [events]`. Three readers: one
sync callback (on its thread) and two async streams (one reading event by
event, one in batches). The clock runs from the first publish until every
reader has handled every event.
"""

from __future__ import annotations

import asyncio
import sys
import time

from chimera.core.bus import EventBus
from chimera.core.events import TextDelta


async def _run(count: int) -> tuple[float, float]:
    bus = EventBus()
    seen = [0, 0, 0]

    def callback(_event: object) -> None:
        seen[0] += 1

    single, batched = bus.stream(), bus.stream()

    async def read_single() -> None:
        async for _ in single:
            seen[1] += 1

    async def read_batched() -> None:
        async for batch in batched.batches():
            seen[2] += len(batch)

    bus.subscribe(callback)
    readers = [asyncio.create_task(read_single()), asyncio.create_task(read_batched())]
    events = [TextDelta(text="token ", seq=i) for i in range(count)]
    start = time.perf_counter()
    for event in events:
        bus.publish(event)
    published = time.perf_counter() - start
    await bus.drain()
    elapsed = time.perf_counter() - start
    await bus.close()
    await asyncio.gather(*readers)
    assert seen == [count, count, count], seen
    return published, elapsed


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 200_000
    published, elapsed = asyncio.run(_run(count))
    print(f"events: {count:,} to 3 subscribers")
    print(f"publish cost      {published / count * 1e6:8.2f} µs an event (the loop's share)")
    print(f"delivered         {count / elapsed:10,.0f} events/s to all three ({elapsed:.2f}s)")


if __name__ == "__main__":
    main()
