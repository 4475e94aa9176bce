"""Provides ``search``: the pure-Python glob and grep, run in a worker process that can always be ended.

The worker (:mod:`search_worker`) starts with every Python search, in a session
of its own, with no API key in its environment. Its records stream back as it
finds them. Cancelling the call (Ctrl-C, the time limit) kills it at once. A
worker silent for ``STALL`` seconds (it reports progress several times a second
while it works) is stuck in one regular expression that backtracks without end:
it is killed and the search ends with an error saying so. If Chimera dies, the
worker dies with it (Linux; elsewhere :mod:`watchdog` kills it).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from collections.abc import Callable
from typing import Any

from chimera.core.credentials import clean_environment
from chimera.core.tools import watchdog

__all__ = ["STALL", "WORKER", "search"]

STALL = 10.0  # seconds without a sign of progress before the search counts as stuck
WORKER = [sys.executable, "-I", "-m", "chimera.core.tools.search_worker"]
_READ = 1 << 16
_FIELDS = {ord("m"): 3, ord("f"): 1, ord("p"): 1}  # fields of each kind of record, the tagged first one included


async def search(request: dict[str, Any], found: Callable[[str, int, str], None]) -> str | None:
    """Run ``request`` (mode ``grep`` or ``glob``, see the worker); call ``found(path, line, text)`` per result.

    A listed file comes as ``(path, 0, "")``. Returns None when the search finished,
    else the one line that says why it did not.
    """
    try:
        proc = await asyncio.create_subprocess_exec(
            *WORKER,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd="/",
            env=clean_environment(),
            start_new_session=True,  # a Ctrl-C to the terminal's group is Chimera's to handle, not the worker's
        )
    except OSError as err:
        return f"the Python search could not run: {err.strerror or err}"
    watched = not sys.platform.startswith("linux")
    if watched:
        watchdog.watch(proc.pid)
    errors = asyncio.ensure_future(_tail(proc.stderr))
    try:
        assert proc.stdin is not None
        proc.stdin.write(json.dumps({**request, "parent": os.getpid()}).encode())
        proc.stdin.close()
        stalled = await _read(proc.stdout, found)
        if stalled:
            return (
                f"the search made no progress for {STALL:g}s and was stopped: the pattern backtracks too much "
                "(nested quantifiers such as (a+)+ or (a|aa)* over a long line); simplify it"
            )
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            await proc.wait()
        if watched:
            watchdog.forget(proc.pid)
        stderr = await errors
    if code != 0:
        last = (stderr.decode("utf-8", "replace").strip().splitlines() or [f"exit status {code}"])[-1]
        return f"the Python search could not run: {last}"
    return None


async def _read(stdout: asyncio.StreamReader | None, found: Callable[[str, int, str], None]) -> bool:
    """Pass the worker's records on until it ends; True when it went silent for ``STALL`` seconds."""
    assert stdout is not None
    fields: list[bytes] = []
    pending: list[bytes] = []  # the start of a field whose end has not come yet
    while True:
        try:
            chunk = await asyncio.wait_for(stdout.read(_READ), STALL)
        except TimeoutError:
            return True
        if not chunk:
            return False
        if b"\0" not in chunk:
            pending.append(chunk)
            continue
        done = chunk.split(b"\0")
        done[0] = b"".join([*pending, done[0]])
        pending = [done.pop()]
        fields += done
        used = 0
        while used < len(fields):
            size = _FIELDS.get(fields[used][0] if fields[used] else 0, 1)
            if used + size > len(fields):
                break
            first = fields[used]
            if first[:1] == b"m":
                found(os.fsdecode(first[1:]), int(fields[used + 1]), fields[used + 2].decode("utf-8", "surrogatepass"))
            elif first[:1] == b"f":
                found(os.fsdecode(first[1:]), 0, "")
            used += size
        del fields[:used]


async def _tail(stream: asyncio.StreamReader | None) -> bytes:
    kept = b""
    while stream is not None and (chunk := await stream.read(_READ)):
        kept = (kept + chunk)[-4096:]
    return kept
