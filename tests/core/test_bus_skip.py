"""A bus reader that leaves some kinds out is never handed them (nor woken for them), and misses nothing else."""

from __future__ import annotations

import threading

from chimera.core.bus import EventBus
from chimera.core.events import RunStarted, StepEvent, TextDelta, TurnStarted


async def test_a_reader_skipping_deltas_gets_every_other_event_in_order_and_drains() -> None:
    """Deltas never reach it; every other event does, in publish order, and drain waits for them."""
    bus = EventBus()
    got: list[StepEvent] = []
    threads: set[int] = set()

    def read(event: StepEvent) -> None:
        threads.add(threading.get_ident())
        got.append(event)

    bus.subscribe(read, name="reader", skip=(TextDelta,))
    published: list[StepEvent] = [RunStarted(task="t", model="m", loop="react")]
    for turn in range(3):
        published += [TurnStarted(turn=turn), *(TextDelta(text=f"w{n} ") for n in range(50))]
    for event in published:
        bus.publish(event)
    assert await bus.drain(5)
    assert got == [e for e in published if not isinstance(e, TextDelta)]
    assert threading.get_ident() not in threads  # on its own thread, as every callback reader
    await bus.close()
