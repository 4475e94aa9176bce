"""Interrupting a run: tools are killed, every open call gets a "Cancelled" result, the run ends properly,
and the conversation stays valid for the next run; also Ctrl-C and a closed pipe on the command line."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from chimera.core.agent import Agent
from chimera.core.agent_loop import AgentLoop, RunInProgress
from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.events import RunStarted, StepEvent, ToolCallFinished, ToolCallStarted
from chimera.core.loop import ReAct
from chimera.core.loop_config import LoopConfig
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, stalled, text, tool_use
from tests.helpers_loop import (
    RUN_TIMEOUT,
    PidFifo,
    SnapshotReplay,
    assert_alternates,
    call,
    collect,
    finished,
    has_ended,
    make_core,
    only,
    say,
    turn,
    watch,
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


@pytest.fixture
def env(ws: Path) -> Iterator[LocalEnvironment]:
    with LocalEnvironment(ws) as environment:
        yield environment


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[PidFifo]:
    pipe = PidFifo(tmp_path / "pid.fifo")
    yield pipe
    pipe.close()


def sleeping_turn(fifo: PidFifo) -> object:
    """One assistant message: a read that finishes, a bash call that sleeps, then a write that never starts."""
    return turn(
        say("Let me look."),
        call("t1", "read", path="a.txt"),
        call("t2", "bash", command=fifo.command(300)),
        call("t3", "write", path="b.txt", content="never\n"),
    )


async def run_until_sleeping(core: AgentLoop, fifo: PidFifo) -> tuple[list[StepEvent], int]:
    """Run until the bash call's process is up, interrupt, read the run to its end; return events and a pidfd."""
    events: list[StepEvent] = []
    pidfd = -1

    async def drive() -> None:
        nonlocal pidfd
        async for event in core.run("wait for it"):
            events.append(event)
            if isinstance(event, ToolCallStarted) and event.name == "bash":
                pidfd = watch(await fifo.wait_pid())
                core.interrupt()

    await asyncio.wait_for(drive(), RUN_TIMEOUT)
    assert pidfd >= 0, "the bash call never started"
    return events, pidfd


def call_results(events: list[StepEvent]) -> list[tuple[str, bool, str]]:
    """(call id, is_error, first word of the output) of every tool_call_finished event."""
    return [(e.call_id, e.is_error, e.output.split(":")[0].split()[0]) for e in only(events, ToolCallFinished)]


# --- AgentLoop.interrupt ------------------------------------------------------------------


async def test_interrupt_kills_the_running_command_and_cancels_open_calls(env: LocalEnvironment, fifo: PidFifo) -> None:
    """Interrupted during `sleep 300`: run_finished interrupted, the sleep and the unstarted write get "Cancelled"."""
    provider = SnapshotReplay([sleeping_turn(fifo), turn(say("Back again."))])
    core = make_core(provider, env)
    events, pidfd = await run_until_sleeping(core, fifo)
    done = finished(events)
    assert (done.success, done.reason, done.steps) == (False, "interrupted", 1)
    assert done.error == "the run was interrupted"
    assert call_results(events) == [("t1", False, "1"), ("t2", True, "Cancelled"), ("t3", True, "Cancelled")]
    assert [e.type for e in events[-3:]] == ["tool_call_finished", "tool_call_finished", "run_finished"]
    assert has_ended(pidfd), "`sleep 300` outlived the interrupt"
    assert not (env.workdir / "b.txt").exists()
    assert provider.position == 1
    assert core.running is False


async def test_after_an_interrupt_every_tool_use_has_a_result(env: LocalEnvironment, fifo: PidFifo) -> None:
    """The conversation ends with a user message answering each tool_use of the last assistant message, in order."""
    core = make_core(SnapshotReplay([sleeping_turn(fifo)]), env)
    _, pidfd = await run_until_sleeping(core, fifo)
    assert has_ended(pidfd)
    assert_alternates(core.messages)
    last = core.messages[-1]
    assert last["role"] == "user"
    assert [(b["type"], b["tool_use_id"], b["is_error"]) for b in last["content"]] == [
        ("tool_result", "t1", False),
        ("tool_result", "t2", True),
        ("tool_result", "t3", True),
    ]
    assert last["content"][0]["content"].endswith("alpha\n")
    assert last["content"][1]["content"].startswith("Cancelled")


async def test_a_follow_up_run_after_an_interrupt_works_and_merges_the_prompt(
    env: LocalEnvironment, fifo: PidFifo
) -> None:
    """The next run on the loop completes; its request holds the cancelled results and the new prompt in one message."""
    provider = SnapshotReplay([sleeping_turn(fifo), turn(say("Back again."))])
    core = make_core(provider, env)
    _, pidfd = await run_until_sleeping(core, fifo)
    assert has_ended(pidfd)
    events = await collect(core, "never mind, just say hi")
    done = finished(events)
    assert (done.success, done.reason, done.answer) == (True, "completed", "Back again.")
    sent = provider.sent[1].messages
    assert_alternates(sent)
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert [b.get("tool_use_id") for b in sent[-1]["content"]] == ["t1", "t2", "t3", None]
    assert sent[-1]["content"][-1] == {"type": "text", "text": "never mind, just say hi"}


async def test_agent_interrupt_ends_agent_run_as_interrupted(env: LocalEnvironment, fifo: PidFifo) -> None:
    """Agent.interrupt() from a bus reader while bash sleeps: Agent.run returns success False, reason interrupted."""
    bus = EventBus()
    agent = Agent(SnapshotReplay([sleeping_turn(fifo)]), DEFAULT_TOOLS, ReAct(LoopConfig()), bus=bus)
    stream = bus.stream()

    async def watcher() -> int:
        async for event in stream:
            if isinstance(event, ToolCallStarted) and event.name == "bash":
                pidfd = watch(await fifo.wait_pid())
                agent.interrupt()
                return pidfd
        raise AssertionError("the bus closed before the bash call started")

    watching = asyncio.create_task(watcher())
    try:
        result = await asyncio.wait_for(agent.arun("wait for it", env), RUN_TIMEOUT)
        pidfd = await asyncio.wait_for(watching, RUN_TIMEOUT)
    finally:
        watching.cancel()
        await bus.close()
    assert (result.success, result.reason, result.steps) == (False, "interrupted", 1)
    assert has_ended(pidfd)


async def test_closing_the_event_iterator_interrupts_and_still_finishes_on_the_bus(
    env: LocalEnvironment, fifo: PidFifo
) -> None:
    """Leaving `async for` over run() early interrupts the run; the bus still gets run_finished (interrupted)."""
    bus = EventBus()
    seen: list[StepEvent] = []
    bus.subscribe(seen.append, name="test")
    core = make_core(SnapshotReplay([sleeping_turn(fifo), turn(say("Back again."))]), env, bus=bus)
    pidfd = -1
    try:
        async with contextlib.aclosing(core.run("wait for it")) as events:
            async for event in events:
                if isinstance(event, ToolCallStarted) and event.name == "bash":
                    pidfd = watch(await fifo.wait_pid())
                    break
        assert await bus.drain(timeout=RUN_TIMEOUT)
    finally:
        await bus.close()
    assert pidfd >= 0
    done = finished(seen)
    assert (done.success, done.reason) == (False, "interrupted")
    assert call_results(seen)[1:] == [("t2", True, "Cancelled"), ("t3", True, "Cancelled")]
    assert has_ended(pidfd)
    assert core.running is False


async def test_starting_a_second_run_while_one_is_going_raises_run_in_progress(env: LocalEnvironment) -> None:
    """run() during a run raises RunInProgress; the first run goes on undisturbed to its answer."""
    provider = SnapshotReplay([turn(say("First answer."))])
    core = make_core(provider, env)
    async with contextlib.aclosing(core.run("first")) as events:
        started = await anext(events)
        assert isinstance(started, RunStarted)
        with pytest.raises(RunInProgress):
            await anext(core.run("second"))
        rest = [e async for e in events]
    done = finished(rest)
    assert (done.success, done.answer, done.run_id) == (True, "First answer.", started.run_id)
    assert {e.run_id for e in rest} == {started.run_id}


async def test_an_interrupt_while_the_run_is_starting_is_not_lost(
    env: LocalEnvironment, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupting while the git snapshot is still being read ends the run as interrupted, with no model request."""
    started = PidFifo(tmp_path / "git-started.fifo")
    release = tmp_path / "git-release.fifo"
    os.mkfifo(release)
    holder = os.open(release, os.O_RDWR)  # keeps a writer, so the fake git's read blocks until we write
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_git = bin_dir / "git"
    fake_git.write_text(f'#!/bin/sh\necho $$ > "{started.path}"\nread line < "{release}"\nexit 1\n')
    fake_git.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    provider = SnapshotReplay([turn(say("I should never be asked."))])
    core = make_core(provider, env)
    try:
        async with contextlib.aclosing(core.run("hi")) as events:
            first = asyncio.ensure_future(anext(events))
            await started.wait_pid()  # git is running: the run is building its system prompt
            core.interrupt()
            os.write(holder, b"go\n")
            collected = [await asyncio.wait_for(first, RUN_TIMEOUT)]
            collected += [e async for e in events]
    finally:
        os.close(holder)
        started.close()
    assert finished(collected).reason == "interrupted"
    assert provider.position == 0


# --- the command line ---------------------------------------------------------------------


def test_ctrl_c_in_a_headless_run_kills_the_command_and_exits_1(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, fifo: PidFifo
) -> None:
    """SIGINT while `chimera run --json` runs `sleep 300`: exit 1, last line run_finished interrupted, sleep gone."""
    api.script(message(tool_use("t1", "bash", {"command": fifo.command(300)}), stop_reason="tool_use"))
    proc = subprocess.Popen(
        [*chimera_command(), "run", "wait", "--json", "--workdir", str(ws), "--permission-mode", "bypass"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )
    with proc:
        try:
            assert proc.stdout is not None
            lines: list[str] = []
            for line in proc.stdout:
                lines.append(line)
                if json.loads(line)["type"] == "tool_call_started":
                    break
            pidfd = watch(fifo.pid())
            proc.send_signal(signal.SIGINT)
            rest, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    events = [json.loads(line) for line in [*lines, *rest.splitlines()]]
    assert proc.returncode == 1, err
    assert "Traceback" not in err
    last = events[-1]
    assert (last["type"], last["success"], last["reason"]) == ("run_finished", False, "interrupted")
    [result] = [e for e in events if e["type"] == "tool_call_finished"]
    assert (result["call_id"], result["is_error"]) == ("t1", True)
    assert result["output"].startswith("Cancelled")
    assert has_ended(pidfd), "`sleep 300` outlived chimera"
    assert err.strip().splitlines()[-1] == "chimera: the run was interrupted"
    assert len(api.requests) == 1


def test_ctrl_c_in_a_plain_run_says_interrupted_once_and_how_long_the_call_ran(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, fifo: PidFifo
) -> None:
    """SIGINT in a plain run: the call reads "cancelled after N.NNs", never 0.00s; one line says interrupted; exit 1."""
    api.script(message(tool_use("t1", "bash", {"command": fifo.command(300)}), stop_reason="tool_use"))
    proc = subprocess.Popen(
        [*chimera_command(), "run", "wait", "--workdir", str(ws), "--permission-mode", "bypass"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )
    with proc:
        try:
            pidfd = watch(fifo.pid())  # the command runs
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert proc.returncode == 1, err
    assert has_ended(pidfd)
    lines = err.splitlines()
    assert lines[0].startswith("● bash ")
    assert re.fullmatch(r"  ✗ cancelled after \d+\.\d\ds", lines[1]), err
    assert lines[1] != "  ✗ cancelled after 0.00s"
    assert lines[2] == "chimera: the run was interrupted"
    assert lines[3].startswith("chimera: session ")  # kept, and how to continue it
    assert len(lines) == 4


def test_a_reader_that_closes_the_pipe_ends_the_run_quietly(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path
) -> None:
    """`chimera run x --json | head -1`: once stdout's reader is gone the run stops, exit 141, no traceback."""
    held = threading.Event()
    api.script(
        stalled(text("Let me write it."), release=held),  # drops once released: the retry is the next event
        message(tool_use("t1", "write", {"path": "made.txt", "content": "x"}), stop_reason="tool_use"),
    )
    proc = subprocess.Popen(
        [*chimera_command(), "run", "x", "--json", "--workdir", str(ws), "--permission-mode", "bypass"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **model_env},
    )
    with proc:
        try:
            assert proc.stdout is not None
            assert proc.stderr is not None
            first = json.loads(proc.stdout.readline())
            proc.stdout.close()
            held.set()  # only now can the run go on and print again
            err = proc.stderr.read().decode()
            proc.wait(timeout=20)
        finally:
            if proc.poll() is None:
                proc.kill()
    assert first["type"] == "run_started"
    assert proc.returncode == 141, err
    assert "Traceback" not in err
    assert "Exception ignored" not in err
    assert all(line.startswith("chimera: ") for line in err.splitlines()), err
    # The run was interrupted, not played on: the next answer was never asked for, its write never made.
    assert len(api.requests) <= 1
    assert not (ws / "made.txt").exists()
