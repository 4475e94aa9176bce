"""A running bash call publishes its output as it comes: coalesced, bounded, secrets masked, before the call ends."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chimera.core.events import StepEvent, ToolCallFinished, ToolOutputDelta
from chimera.core.redact import MASK
from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.executor import Executor, ToolCall, ToolOutcome
from chimera.core.tools.live import INTERVAL, MAX_DELTA

SECRET = "sk-live-abcdef123456"


class Watch:
    """The emit callback: every event, when each came, and a way to wait for one that fits."""

    def __init__(self) -> None:
        self.events: list[StepEvent] = []
        self.times: list[float] = []
        self._changed = asyncio.Event()

    def __call__(self, event: StepEvent) -> None:
        self.events.append(event)
        self.times.append(time.monotonic())
        self._changed.set()

    @property
    def deltas(self) -> list[ToolOutputDelta]:
        return [e for e in self.events if isinstance(e, ToolOutputDelta)]

    def live_text(self) -> str:
        return "".join(d.text for d in self.deltas)

    async def until(self, condition: Callable[[], bool], what: str, within: float = 10) -> None:
        deadline = time.monotonic() + within
        while not condition():
            self._changed.clear()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"never happened: {what}; events: {self.events}")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), remaining)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


@pytest.fixture
def gate(ws: Path) -> Iterator[Callable[[], None]]:
    """A FIFO named ``gate`` in the workspace: each ``read -r _ < gate`` of the command waits for one call of the
    fixture's value. The test holds both ends, so its writes never block and never get lost."""
    os.mkfifo(ws / "gate")
    fd = os.open(ws / "gate", os.O_RDWR | os.O_NONBLOCK)
    try:
        yield lambda: os.write(fd, b"go\n") and None
    finally:
        os.close(fd)


def run_bash(executor: Executor, command: str, watch: Watch) -> asyncio.Task[list[ToolOutcome]]:
    return asyncio.create_task(executor.run([ToolCall("c1", "bash", {"command": command})], watch))


async def test_output_arrives_while_the_command_still_runs(ws: Path, tmp_path: Path, gate: Callable[[], None]) -> None:
    """A command prints a line and waits: the line is published before the call ends; the result is whole."""
    watch = Watch()
    running = run_bash(
        Executor(DEFAULT_TOOLS, ws, tmp_path / "spill"), "echo first line; read -r _ < gate; echo done", watch
    )
    await watch.until(lambda: watch.live_text() == "first line\n", "the first line, live")
    assert not running.done()
    assert not any(isinstance(e, ToolCallFinished) for e in watch.events)
    assert {d.call_id for d in watch.deltas} == {"c1"}
    gate()
    (outcome,) = await asyncio.wait_for(running, 10)
    assert outcome.result.output == "first line\ndone\n"
    assert outcome.result.output.startswith(watch.live_text())
    assert isinstance(watch.events[-1], ToolCallFinished)


async def test_a_secret_never_shows_in_live_output_even_cut_across_writes(
    ws: Path, tmp_path: Path, gate: Callable[[], None]
) -> None:
    """Half a secret is held back until the rest comes, then the whole is masked, as in the result."""
    executor = Executor(DEFAULT_TOOLS, ws, tmp_path / "spill", secrets=[SECRET])
    half, rest = SECRET[:8], SECRET[8:]
    command = f"printf 'key: {half}'; read -r _ < gate; echo '{rest}'; echo after; read -r _ < gate; echo {SECRET}"
    watch = Watch()
    running = run_bash(executor, command, watch)
    await watch.until(lambda: bool(watch.deltas), "the words before the secret, live")
    assert watch.live_text() == "key: "  # the half secret waits for the rest
    gate()
    await watch.until(lambda: watch.live_text().endswith("after\n"), "the line after the secret")
    gate()
    (outcome,) = await asyncio.wait_for(running, 10)
    assert outcome.result.output == f"key: {MASK}\nafter\n{MASK}\n"
    assert watch.live_text().startswith(f"key: {MASK}\nafter\n")
    assert outcome.result.output.startswith(watch.live_text())  # the live copy is the result as it came
    for delta in watch.deltas:
        assert not any(SECRET[:n] in delta.text for n in range(3, len(SECRET) + 1)), delta.text


async def test_a_flood_of_output_makes_few_bounded_events(ws: Path, tmp_path: Path, gate: Callable[[], None]) -> None:
    """20 MB printed as fast as bash can, twice: a few events a second, each capped, each starting a line;
    the result is truncated as before."""
    watch = Watch()
    flood = "yes | head -c 20000000"
    command = f"{flood}; read -r _ < gate; {flood}; echo; echo the end; read -r _ < gate"
    started = time.monotonic()
    running = run_bash(Executor(DEFAULT_TOOLS, ws, tmp_path / "spill"), command, watch)
    await watch.until(lambda: bool(watch.deltas), "the first flood, live")
    assert watch.deltas[0].text.startswith("y\n")
    gate()
    await watch.until(lambda: "the end" in watch.deltas[-1].text, "the end of the second flood, live")
    gate()
    (outcome,) = await asyncio.wait_for(running, 30)
    took = time.monotonic() - started
    deltas = watch.deltas
    assert len(deltas) <= took / INTERVAL + 2
    assert all(len(d.text) <= MAX_DELTA for d in deltas)
    assert all(d.text.startswith(("y\n", "\n", "the end")) for d in deltas if d.skipped)  # dropped: whole lines
    # Every character printed is in a delta or counted as dropped, once.
    assert sum(d.skipped + len(d.text) for d in deltas) == 2 * 20_000_000 + len("\nthe end\n")
    times = [t for t, e in zip(watch.times, watch.events, strict=True) if isinstance(e, ToolOutputDelta)]
    assert all(later - earlier >= INTERVAL * 0.9 for earlier, later in itertools.pairwise(times))
    assert "lines truncated" in outcome.result.output
    assert outcome.result.output.endswith("the end\n")
