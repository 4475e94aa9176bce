"""Provides ``use_daemon_threads``: a loop's blocking work on daemon threads, so a stuck call never keeps
the process from exiting.

asyncio runs ``to_thread`` work on the loop's default executor, whose threads
the interpreter joins at exit: one call stuck in the kernel (an ``open`` of a
FIFO, a read on a hung network mount) and the process never exits, not even on
Ctrl-C, although its run is over. On a loop given :class:`DaemonThreadExecutor`,
each piece of work runs on a daemon thread of its own instead; at exit the
executor waits ``GRACE`` seconds for work still running (a file being written
gets to finish) and then lets the rest go.
"""

from __future__ import annotations

import asyncio
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec, TypeVar

__all__ = ["GRACE", "DaemonThreadExecutor", "use_daemon_threads"]

GRACE = 1.0  # seconds shutdown waits for work still running before letting it go

_P = ParamSpec("_P")
_T = TypeVar("_T")
_installed: weakref.WeakSet[asyncio.AbstractEventLoop] = weakref.WeakSet()


class DaemonThreadExecutor(ThreadPoolExecutor):
    """Runs each call on a daemon thread of its own; ``shutdown`` waits at most ``GRACE`` seconds.

    A ThreadPoolExecutor only because asyncio accepts nothing else as a default
    executor: none of its pool threads is ever started.
    """

    def __init__(self) -> None:
        super().__init__(max_workers=1, thread_name_prefix="chimera-blocking")
        self._running: set[threading.Thread] = set()
        self._guard = threading.Lock()
        self._closed = False

    def submit(self, fn: Callable[_P, _T], /, *args: _P.args, **kwargs: _P.kwargs) -> Future[_T]:
        future: Future[_T] = Future()

        def work() -> None:
            try:
                if future.set_running_or_notify_cancel():
                    try:
                        result = fn(*args, **kwargs)
                    except BaseException as err:
                        future.set_exception(err)
                    else:
                        future.set_result(result)
            finally:
                with self._guard:
                    self._running.discard(thread)

        thread = threading.Thread(target=work, name="chimera-blocking", daemon=True)
        with self._guard:
            if self._closed:
                raise RuntimeError("cannot schedule new futures after shutdown")
            self._running.add(thread)
        thread.start()
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        with self._guard:
            self._closed = True
            running = list(self._running)
        if wait:
            deadline = time.monotonic() + GRACE
            for thread in running:
                thread.join(max(0.0, deadline - time.monotonic()))
        super().shutdown(wait=False, cancel_futures=cancel_futures)


def use_daemon_threads(loop: asyncio.AbstractEventLoop) -> None:
    """Make ``loop`` run its ``to_thread`` and default-executor work on daemon threads (once per loop)."""
    if loop not in _installed:
        loop.set_default_executor(DaemonThreadExecutor())
        _installed.add(loop)
