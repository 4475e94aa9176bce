"""Provides the in-process event bus that carries step events to their readers.

The loop publishes; the session store, the workbench, the headless printer and
the trajectory log subscribe. Publishing never waits for a reader: each
subscriber has its own queue, so one that raises or blocks never stalls the
loop or the others, and each sees events in publish order.

Two ways to read:

* ``bus.subscribe(callback)`` calls ``callback(event)`` on a thread of the
  subscriber's own (``skip=`` names kinds it never gets). Exceptions are
  logged and the subscriber goes on.
* ``bus.stream()`` returns an async iterator for the event loop it is called
  on; ``stream().batches()`` yields everything queued at once, for readers
  that redraw once per frame.

``await bus.drain()`` returns when every subscriber has handled every event
published before the call; ``bus.close()`` lets callbacks finish, then ends
the streams (their readers still get what was queued).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable
from typing import Final

from chimera.core.events import StepEvent

__all__ = ["EventBus", "StreamSubscription", "Subscription"]

log = logging.getLogger("chimera.bus")

_CLOSE: Final = object()


class _Marker:
    """A place in a callback queue; its future resolves when the thread reaches it."""

    def __init__(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.future: asyncio.Future[None] = self.loop.create_future()

    def reached(self) -> None:
        def settle() -> None:
            if not self.future.done():
                self.future.set_result(None)

        with contextlib.suppress(RuntimeError):  # the waiting loop has closed
            self.loop.call_soon_threadsafe(settle)


class Subscription:
    """A callback fed from its own thread, in publish order."""

    def __init__(
        self,
        bus: EventBus,
        callback: Callable[[StepEvent], object],
        name: str,
        skip: tuple[type[StepEvent], ...] = (),
    ) -> None:
        self._bus = bus
        self._callback = callback
        self._skip = skip
        self._queue: queue.SimpleQueue[object] = queue.SimpleQueue()
        self.errors = 0
        self._thread = threading.Thread(target=self._run, name=f"bus:{name}", daemon=True)
        self._thread.start()

    def _put(self, event: StepEvent) -> None:
        if not isinstance(event, self._skip):  # a kind it never reads never wakes its thread
            self._queue.put(event)

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            if item is _CLOSE:
                return
            if isinstance(item, _Marker):
                item.reached()
                continue
            try:
                self._callback(item)  # type: ignore[arg-type]
            except Exception:
                self.errors += 1
                log.exception("bus subscriber %s raised; it keeps its place", self._thread.name)

    async def _drained(self) -> None:
        marker = _Marker()
        self._queue.put(marker)
        await marker.future

    def _close(self) -> None:
        self._queue.put(_CLOSE)

    def cancel(self) -> None:
        """Stop delivering to this subscriber; what is queued is dropped."""
        self._bus._remove(self)
        self._close()


class StreamSubscription:
    """An async iterator of events, bound to the event loop that created it."""

    def __init__(self, bus: EventBus) -> None:
        self._bus = bus
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[object] = asyncio.Queue()
        self._published = 0
        self._handled = 0
        self._taken = 0
        self._caught_up = asyncio.Event()
        self._caught_up.set()
        self._closed = False

    def _put(self, item: object) -> None:
        if self._loop.is_closed():
            return
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is self._loop:
            self._enqueue(item)
        else:
            self._loop.call_soon_threadsafe(self._enqueue, item)

    def _enqueue(self, item: object) -> None:
        if item is not _CLOSE:
            self._published += 1
            self._caught_up.clear()
        self._queue.put_nowait(item)

    def _mark_handled(self) -> None:
        """Everything taken so far has been handled by the reader."""
        self._handled = self._taken
        if self._handled >= self._published:
            self._caught_up.set()

    def __aiter__(self) -> StreamSubscription:
        return self

    async def __anext__(self) -> StepEvent:
        self._mark_handled()
        if self._closed:
            raise StopAsyncIteration
        item = await self._queue.get()
        if item is _CLOSE:
            self._closed = True
            self._caught_up.set()
            raise StopAsyncIteration
        self._taken += 1
        return item  # type: ignore[return-value]

    async def batches(self) -> AsyncIterator[list[StepEvent]]:
        """Yield lists of events: waits for one, then takes all that are queued."""
        while True:
            self._mark_handled()
            if self._closed:
                return
            first = await self._queue.get()
            batch: list[StepEvent] = []
            for item in self._take_all(first):
                if item is _CLOSE:
                    self._closed = True
                    break
                batch.append(item)  # type: ignore[arg-type]
            self._taken += len(batch)
            if batch:
                yield batch
            if self._closed:
                self._caught_up.set()
                return

    def _take_all(self, first: object) -> list[object]:
        items = [first]
        while not self._queue.empty():
            items.append(self._queue.get_nowait())
        return items

    async def _drained(self) -> None:
        if asyncio.get_running_loop() is self._loop:
            await self._caught_up.wait()
        else:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._caught_up.wait(), self._loop))

    def _close(self) -> None:
        self._put(_CLOSE)

    def cancel(self) -> None:
        """Stop delivering to this reader and end its iteration."""
        self._bus._remove(self)
        self._close()


class EventBus:
    """Delivers each published event to every subscriber, in order, without waiting."""

    def __init__(self) -> None:
        self._subscribers: list[Subscription | StreamSubscription] = []
        self._lock = threading.Lock()
        self.closed = False

    def subscribe(
        self, callback: Callable[[StepEvent], object], *, name: str = "", skip: tuple[type[StepEvent], ...] = ()
    ) -> Subscription:
        """Call ``callback`` for every event published from now on, on its own thread, but those of the
        kinds in ``skip`` (a reader that leaves streaming deltas out is not woken a hundred times a second)."""
        sub = Subscription(self, callback, name or getattr(callback, "__qualname__", "callback"), skip)
        with self._lock:
            self._subscribers.append(sub)
        return sub

    def stream(self) -> StreamSubscription:
        """Return an async iterator of every event published from now on."""
        sub = StreamSubscription(self)
        with self._lock:
            self._subscribers.append(sub)
        return sub

    def publish(self, event: StepEvent) -> None:
        """Queue ``event`` for every subscriber; never blocks, never raises for a reader."""
        if self.closed:
            return
        with self._lock:
            subscribers = tuple(self._subscribers)
        for sub in subscribers:
            try:
                sub._put(event)
            except Exception:  # a reader's loop went away; the others go on
                log.exception("could not queue an event for a subscriber")

    async def drain(self, timeout: float | None = None) -> bool:
        """Wait until every subscriber has handled what was published; False on timeout."""
        with self._lock:
            subscribers = tuple(self._subscribers)
        waits = [sub._drained() for sub in subscribers]
        if not waits:
            return True
        try:
            await asyncio.wait_for(asyncio.gather(*waits), timeout)
        except TimeoutError:
            return False
        return True

    async def close(self, timeout: float | None = 5.0) -> None:
        """Let callbacks finish what is queued (up to ``timeout``), then end every subscription.

        Each callback thread ends once it reaches the end of its queue; one still stuck
        in a callback after ``timeout`` is left to finish on its own (it is a daemon
        thread). A stream keeps what is queued for it: its reader still gets every
        event, then the end.
        """
        with self._lock:
            callbacks = [sub for sub in self._subscribers if isinstance(sub, Subscription)]
        if callbacks:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*(sub._drained() for sub in callbacks)), timeout)
        self.closed = True
        with self._lock:
            subscribers, self._subscribers = self._subscribers, []
        for sub in subscribers:
            with contextlib.suppress(Exception):
                sub._close()

    def _remove(self, sub: Subscription | StreamSubscription) -> None:
        with self._lock, contextlib.suppress(ValueError):
            self._subscribers.remove(sub)
