"""Shared helpers for loop tests: scripted assistant turns, a provider that keeps what it was sent,
and a FIFO through which a shell command tells the test its process id.

Test modules define their own fixtures as thin wrappers around these (fixtures imported
from another module trip the linter).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import copy
import os
import select
import shlex
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, TypeVar

from chimera.core.agent_loop import AgentLoop
from chimera.core.bus import EventBus
from chimera.core.env import Environment
from chimera.core.events import RunFinished, StepEvent
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.base import Message, ModelChunk, ModelRequest, Usage
from chimera.core.providers.replay import RecordedTurn, ReplayProvider
from chimera.core.tool_group import DEFAULT_TOOLS

RUN_TIMEOUT = 20.0  # a guard against a hung run, never reached by a passing test
_E = TypeVar("_E", bound=StepEvent)


# --- scripted turns -----------------------------------------------------------------


def say(value: str) -> dict[str, Any]:
    """A text block."""
    return {"type": "text", "text": value}


def call(call_id: str, name: str, **args: Any) -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def turn(*blocks: dict[str, Any], usage: Usage | None = None) -> RecordedTurn:
    """An assistant turn; its stop reason is tool_use when it calls a tool."""
    stop = "tool_use" if any(b["type"] == "tool_use" for b in blocks) else "end_turn"
    return RecordedTurn(
        message={"role": "assistant", "content": list(blocks)}, stop_reason=stop, usage=usage or Usage()
    )


def bash_turn(call_id: str, command: str, usage: Usage | None = None) -> RecordedTurn:
    return turn(call(call_id, "bash", command=command), usage=usage)


class SnapshotReplay(ReplayProvider):
    """A ReplayProvider that also keeps a deep copy of each request as it was sent.

    ``ReplayProvider.requests`` holds the live request objects, whose ``messages`` list
    the loop keeps appending to; ``sent`` holds what the model saw at the time.
    """

    def __init__(self, turns: list[RecordedTurn], **kwargs: Any) -> None:
        super().__init__(turns, **kwargs)
        self.sent: list[ModelRequest] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        if self.position < len(self._turns):
            self.sent.append(copy.deepcopy(request))
        async for chunk in super().stream(request):
            yield chunk


def make_core(
    provider: ReplayProvider,
    env: Environment,
    config: LoopConfig | None = None,
    *,
    bus: EventBus | None = None,
    policy: PermissionPolicy | None = None,
    can_ask: bool = False,
) -> AgentLoop:
    return AgentLoop(
        provider,
        DEFAULT_TOOLS,
        env,
        strategy=ReAct(config or LoopConfig()),
        bus=bus,
        policy=policy,
        can_ask=can_ask,
    )


async def collect(core: AgentLoop, task: str, *, within: float = RUN_TIMEOUT) -> list[StepEvent]:
    """Every event of one run; a run not over ``within`` seconds fails with TimeoutError."""
    events: list[StepEvent] = []

    async def drain() -> None:
        async for event in core.run(task):
            events.append(event)

    await asyncio.wait_for(drain(), within)
    return events


def only(events: list[StepEvent], cls: type[_E]) -> list[_E]:
    return [e for e in events if isinstance(e, cls)]


def finished(events: list[StepEvent]) -> RunFinished:
    """The run's last event, which must be its only ``run_finished``."""
    assert events, "the run produced no events"
    last = events[-1]
    assert isinstance(last, RunFinished), f"the run ended with {last.type}, not run_finished"
    assert len(only(events, RunFinished)) == 1
    return last


def user_texts(message: Message) -> list[str]:
    """The text blocks of a user message (its content may be a plain string)."""
    content = message["content"]
    if isinstance(content, str):
        return [content]
    return [b["text"] for b in content if b.get("type") == "text"]


def assert_alternates(messages: list[Message]) -> None:
    """User and assistant messages alternate, starting with the user; every tool_use is answered next."""
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant"] * (len(roles) // 2) + ["user"] * (len(roles) % 2), roles
    for i, message in enumerate(messages):
        if message["role"] != "assistant":
            continue
        asked = [b["id"] for b in message["content"] if b.get("type") == "tool_use"]
        if not asked:
            continue
        assert i + 1 < len(messages), f"the tool calls {asked} of message {i} have no results"
        answer = messages[i + 1]["content"]
        answered = [b["tool_use_id"] for b in answer if isinstance(b, dict) and b.get("type") == "tool_result"]
        assert answered == asked, f"message {i + 1} answers {answered}, not the calls {asked}"


# --- processes ----------------------------------------------------------------------


class PidFifo:
    """A FIFO through which a command tells the test its pid, read on a thread of its own.

    ``command(n)`` writes the shell's pid to the FIFO, then execs ``sleep n`` in the
    same process, so that pid is the sleeping process. The reader starts at once and
    blocks until the command opens the FIFO: no polling.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        os.mkfifo(path)
        self.future: concurrent.futures.Future[int] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._read, name="pid-fifo", daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            with open(self.path, encoding="ascii") as fifo:
                text = fifo.read()
            pid = int(text.strip())
        except Exception as err:  # handed to the waiting test
            with contextlib.suppress(concurrent.futures.InvalidStateError):
                self.future.set_exception(err)
            return
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            self.future.set_result(pid)

    def command(self, seconds: int) -> str:
        return f"echo $$ > {shlex.quote(str(self.path))}; exec sleep {seconds}"

    def pid(self, timeout: float = 10.0) -> int:
        return self.future.result(timeout)

    async def wait_pid(self, timeout: float = 10.0) -> int:
        return await asyncio.wait_for(asyncio.wrap_future(self.future), timeout)

    def close(self) -> None:
        """Release the reader if nobody ever wrote (a failed test), so its thread ends."""
        if self._thread.is_alive():
            with contextlib.suppress(OSError):
                os.close(os.open(self.path, os.O_WRONLY | os.O_NONBLOCK))
            self._thread.join(5)


def watch(pid: int) -> int:
    """A pidfd for ``pid``: it becomes readable when the process ends (immune to pid reuse)."""
    return os.pidfd_open(pid)


def has_ended(pidfd: int, within: float = 5.0) -> bool:
    """True when the process behind ``pidfd`` has ended, waiting up to ``within`` seconds for it."""
    try:
        ready, _, _ = select.select([pidfd], [], [], within)  # an event wait, not a sleep
        return bool(ready)
    finally:
        os.close(pidfd)
