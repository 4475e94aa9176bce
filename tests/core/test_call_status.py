"""Every finished call says how it ended (``status``), so no reader reads its output to learn it: live, in the
resumed history and in a replay alike."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chimera.core.bus import EventBus
from chimera.core.events import PermissionRequested, StepEvent, ToolCallFinished, ToolCallStarted
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.playback import play_back
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, message, text, tool_use

CALLS = [
    ("c1", "glob", {"pattern": "*"}),  # ok
    ("c2", "read", {"path": "missing.txt"}),  # failed
    ("c3", "bash", {"command": "rm -rf build"}),  # refused by a deny rule
    ("c4", "bash", {"command": "echo hi"}),  # declined by the person
]
EXPECTED = {"c1": "ok", "c2": "failed", "c3": "refused", "c4": "declined"}


def statuses(events: list[StepEvent]) -> dict[str, str]:
    """Each finished call's status, by call id (calls that run side by side finish in any order)."""
    return {e.call_id: e.status for e in events if isinstance(e, ToolCallFinished)}


@pytest.mark.usefixtures("model_env")
async def test_each_fate_of_a_call_is_its_status_live_in_history_and_in_a_replay(
    api: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    """ok, failed, refused by a rule, declined by the person: each call's status, the same three ways."""
    api.script(
        message(*(tool_use(i, name, args) for i, name, args in CALLS), stop_reason="tool_use"),
        message(text("Done.")),
    )
    deny = ("bash(rm -rf *)",)
    session = start_session(
        RunOptions(workdir=project, model=DEFAULT_MODEL, permission_mode="ask", interactive=True, deny=deny)
    )
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    events = session.bus.stream()
    try:
        run = asyncio.create_task(session.run("look around"))
        async for event in events:
            if isinstance(event, PermissionRequested):
                session.answer(event.request_id, "deny")
                break
        events.cancel()  # a stream nobody reads would hold up the drain
        await asyncio.wait_for(run, 30)
        await session.bus.drain(10)
    finally:
        events.cancel()
        await session.close()
    assert statuses(seen) == EXPECTED

    with SessionStore.open(isolated_env, session.id, writable=False) as store:
        assert statuses(branch_events(store)) == EXPECTED
    bus = EventBus()
    replayed: list[StepEvent] = []
    bus.subscribe(replayed.append)
    await play_back(session.id, bus)
    await bus.drain(10)
    assert statuses(replayed) == EXPECTED


@pytest.mark.usefixtures("model_env")
async def test_a_call_stopped_while_it_runs_is_cancelled(api: FakeAnthropic, project: Path) -> None:
    """An interrupt while a command runs: its status is cancelled."""
    api.script(message(tool_use("s1", "bash", {"command": "sleep 30"}), stop_reason="tool_use"))
    session = start_session(RunOptions(workdir=project, model=DEFAULT_MODEL, permission_mode="bypass"))
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    events = session.bus.stream()
    try:
        run = asyncio.create_task(session.run("wait"))
        async for event in events:
            if isinstance(event, ToolCallStarted):
                session.interrupt()
                break
        events.cancel()
        await asyncio.wait_for(run, 30)
        await session.bus.drain(10)
    finally:
        events.cancel()
        await session.close()
    assert statuses(seen) == {"s1": "cancelled"}


@pytest.mark.usefixtures("model_env")
async def test_calls_the_run_stopped_before_are_skipped(api: FakeAnthropic, project: Path) -> None:
    """An answer that spends the token budget: its calls are not run, and say so as skipped."""
    api.script(message(tool_use("g1", "glob", {"pattern": "*"}), stop_reason="tool_use", input_tokens=5_000))
    session = start_session(RunOptions(workdir=project, model=DEFAULT_MODEL, permission_mode="bypass", max_tokens=100))
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    try:
        await session.run("look")
        await session.bus.drain(10)
    finally:
        await session.close()
    assert statuses(seen) == {"g1": "skipped"}
