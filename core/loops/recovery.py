"""Provides ``Recovery``: the retry ladder around one model request.

Failures worth retrying (rate limits, overload, a mid-stream ``error`` event, a
stream cut before ``message_stop``, a stalled stream, a dropped connection)
are tried again with backoff, each kind with its own budget, each attempt
announced through ``on_retry``. A server that has never answered is a setup
error, reported at once (unless the policy allows retries for it); one that
answered before and then cannot be reached is a lost connection. A wait
longer than the policy accepts ends the request with the server's advice.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable

from chimera.core.errors import ProviderError
from chimera.core.events import RetryScheduled
from chimera.core.loop_config import RetryPolicy
from chimera.core.providers.base import ModelDone

__all__ = ["Recovery"]


class Recovery:
    """Retries one request at a time by ``policy``; remembers whether the server ever answered."""

    def __init__(self, policy: RetryPolicy, on_retry: Callable[[RetryScheduled], object]) -> None:
        self.policy = policy
        self.on_retry = on_retry
        self.reached_model = False

    async def request(self, attempt: Callable[[], Awaitable[ModelDone]]) -> ModelDone:
        """``attempt()`` until it answers, or a failure is not worth retrying, or its budget is spent."""
        policy = self.policy
        attempts: Counter[str] = Counter()
        while True:
            try:
                done = await attempt()
            except ProviderError as err:
                if err.kind == "unreachable" and self.reached_model:
                    # The server answered before, so this is a dropped network, not a wrong URL.
                    err = ProviderError(str(err), kind="connection", retryable=True)
                budget = policy.unreachable_retries if err.kind == "unreachable" else policy.max_retries
                if not err.retryable or attempts[err.kind] >= budget:
                    raise err from None
                attempts[err.kind] += 1
                wait = policy.wait(attempts[err.kind], err.retry_after)
                if wait > policy.max_retry_after:
                    raise ProviderError(
                        f"{err} — the server asks to wait {wait:.0f}s; try again later",
                        kind=err.kind,
                        retryable=False,
                    ) from None
                self.on_retry(RetryScheduled(reason=err.kind, attempt=attempts[err.kind], wait_s=wait, detail=str(err)))
                await asyncio.sleep(wait)
                continue
            self.reached_model = True
            return done
