"""The live Session: runs, and switch, branch and checkpoint between them, over the real store, git and
the loopback Messages API."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.events import (
    CheckpointCreated,
    PermissionRequested,
    SteeringDelivered,
    StepEvent,
    Switched,
)
from chimera.core.sessions.reading import read_node, summary
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.workspace_lock import WorkspaceLock
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use


def writes(content: str, answer: str) -> list[object]:
    return [
        message(tool_use("w", "write", {"path": "a.txt", "content": content}), stop_reason="tool_use"),
        message(text(answer)),
    ]


async def two_runs(api: FakeAnthropic, project: Path, **options: object) -> tuple[Session, list[StepEvent]]:
    api.script(*writes("v1\n", "Wrote v1."), *writes("v2\n", "Wrote v2."))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass", **options))  # type: ignore[arg-type]
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    await session.run("write v1")
    await session.run("now v2")
    return session, seen


@pytest.mark.usefixtures("model_env")
async def test_switch_brings_back_the_files_and_the_conversation(api: FakeAnthropic, project: Path) -> None:
    session, seen = await two_runs(api, project)
    try:
        first_answer = next(n for n in session.store.tree.path() if summary(read_node(n)) == "Wrote v1.")
        shown: list[str] = []
        done = session.switch(first_answer.id, confirm=lambda plan: shown.append(plan.node or "") or True)

        assert done is not None
        assert shown == [first_answer.id]  # the front end saw the plan first
        assert (project / "a.txt").read_text() == "v1\n"
        api.script(message(text("Back at v1.")))
        await session.run("where are we?")
        sent = json.dumps(api.requests[-1].messages)
        assert "write v1" in sent
        assert "now v2" not in sent  # the conversation moved with the files
        await session.bus.drain()
        assert [e.to_node for e in seen if isinstance(e, Switched)] == [first_answer.id]
    finally:
        await session.close()
    logged = (session.store.folder / "events.jsonl").read_text()
    assert '"type":"switched"' in logged


@pytest.mark.usefixtures("model_env")
async def test_a_switch_the_front_end_declines_changes_nothing(api: FakeAnthropic, project: Path) -> None:
    session, _ = await two_runs(api, project)
    try:
        leaf = session.store.tree.leaf
        first = next(n for n in session.store.tree.path() if n.kind == "user")
        assert session.switch(first.id, confirm=lambda _: False) is None
        assert (project / "a.txt").read_text() == "v2\n"
        assert session.store.tree.leaf == leaf
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_switch_is_refused_while_another_run_works_in_the_folder_and_the_session_keeps_its_hold(
    api: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    session, _ = await two_runs(api, project)
    other = WorkspaceLock(isolated_env, project).shared()  # another Chimera working there
    working = re.escape(f"another process is working in {project} (pid {os.getpid()} (")  # this process
    try:
        first = next(n for n in session.store.tree.path() if n.kind == "user")
        with pytest.raises(ConfigError, match=working):
            session.switch(first.id)
        other.release()
        with pytest.raises(ConfigError, match=working):
            WorkspaceLock(isolated_env, project).exclusive()  # the session still holds its share
    finally:
        other.release()
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_branch_continues_from_a_point_and_leaves_the_files(api: FakeAnthropic, project: Path) -> None:
    session, _ = await two_runs(api, project)
    try:
        first_answer = next(n for n in session.store.tree.path() if summary(read_node(n)) == "Wrote v1.")
        assert session.branch(first_answer.id) == first_answer.id
        assert (project / "a.txt").read_text() == "v2\n"  # a branch moves the conversation only
        api.script(message(text("A new branch.")))
        await session.run("something else")
        tree = session.store.tree
        assert tree.is_branch_point(first_answer.id)
        assert "now v2" not in json.dumps(api.requests[-1].messages)
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_checkpoint_names_the_leaf_with_its_files(api: FakeAnthropic, project: Path) -> None:
    session, seen = await two_runs(api, project)
    try:
        (project / "a.txt").write_text("v2, polished by hand\n")
        named = session.checkpoint("polished")
        await session.bus.drain()
        assert named.node == session.store.tree.leaf
        assert [e.snapshot for e in seen if isinstance(e, CheckpointCreated)][-1] == named.snapshot
        first_answer = next(n for n in session.store.tree.path() if summary(read_node(n)) == "Wrote v1.")
        session.switch(first_answer.id)
        assert (project / "a.txt").read_text() == "v1\n"
        session.switch("polished")
        assert (project / "a.txt").read_text() == "v2, polished by hand\n"  # the files as they were when named
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_nothing_moves_while_a_run_is_going(api: FakeAnthropic, project: Path) -> None:
    """Asked for permission mid-run, the session refuses to switch or branch until the run ends."""
    api.script(*writes("v1\n", "Wrote v1."))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="ask", interactive=True))
    events = session.bus.stream()
    try:
        run = asyncio.create_task(session.run("write v1"))
        async for event in events:
            if isinstance(event, PermissionRequested):
                break
        for attempt in (lambda: session.switch("x"), lambda: session.branch("x")):
            with pytest.raises(ConfigError, match="a run is going: interrupt it or let it finish"):
                attempt()
        assert session.answer(event.request_id, "deny")
        result = await asyncio.wait_for(run, 20)
        assert result.success
        assert not (project / "a.txt").exists()
    finally:
        events.cancel()
        await session.close()


async def asked(session: Session, task: str) -> tuple[asyncio.Task[object], PermissionRequested]:
    """Start ``task`` and wait until the run asks for permission (it waits there)."""
    events = session.bus.stream()
    run: asyncio.Task[object] = asyncio.create_task(session.run(task))
    try:
        async for event in events:
            if isinstance(event, PermissionRequested):
                return run, event
    finally:
        events.cancel()
    raise AssertionError("the run never asked")


@pytest.mark.usefixtures("model_env")
async def test_a_follow_up_runs_when_the_run_ends_and_leaves_the_queue(api: FakeAnthropic, project: Path) -> None:
    api.script(*writes("v1\n", "Wrote v1."), message(text("Hello.")))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="ask", interactive=True))
    try:
        run, question = await asked(session, "write v1")
        session.follow_up("now say hello")
        assert session.follow_ups == ["now say hello"]
        assert [q.text for q in session.store.tree.queued.values()] == ["now say hello"]
        session.answer(question.request_id, "allow")
        result = await asyncio.wait_for(run, 20)
        assert result.success  # type: ignore[attr-defined]
        assert "now say hello" in json.dumps(api.requests[-1].messages[-1])
        assert session.follow_ups == []
        assert session.store.tree.queued == {}
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_an_interrupt_gives_back_the_steering_and_keeps_the_follow_ups(
    api: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    api.script(*writes("v1\n", "Wrote v1."))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="ask", interactive=True))
    try:
        run, _ = await asked(session, "write v1")
        assert session.steer("call it b.txt")
        session.follow_up("then say hello")
        assert session.interrupt() == ["call it b.txt"]
        result = await asyncio.wait_for(run, 20)
        assert result.reason == "interrupted"  # type: ignore[attr-defined]
        assert len(api.requests) == 1  # the follow-up waits for the next run
        assert [(q.kind, q.text) for q in session.store.tree.queued.values()] == [("follow_up", "then say hello")]
    finally:
        await session.close()
    with SessionStore.open(isolated_env, session.id, writable=False) as store:
        assert [q.text for q in store.tree.queued.values()] == ["then say hello"]  # on disk as in memory


@pytest.mark.usefixtures("model_env")
async def test_steering_during_a_stream_is_delivered_once_after_the_calls_results(
    api: FakeAnthropic, project: Path
) -> None:
    (project / "a.txt").write_text("a\n")
    release, reached = threading.Event(), threading.Event()
    streaming = message(text("Reading a first."), tool_use("r1", "read", {"path": "a.txt"}), stop_reason="tool_use")
    api.script(paused(streaming, release, reached), message(text("Read a, and b is noted.")))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    delivered: list[StepEvent] = []
    session.bus.subscribe(lambda e: delivered.append(e) if isinstance(e, SteeringDelivered) else None)
    try:
        run = asyncio.create_task(session.run("read a"))
        assert await asyncio.to_thread(reached.wait, 10)  # the answer has begun, and stays open until released
        assert session.steer("then look at b")
        release.set()
        result = await asyncio.wait_for(run, 20)
        assert result.success
        await session.bus.drain()
        after = api.requests[1].messages[-1]["content"]
        assert [b["type"] for b in after] == ["tool_result", "text"]  # the call's result first, then the words
        assert after[1]["text"].endswith("then look at b</system-reminder>")
        assert json.dumps([r.messages for r in api.requests]).count("then look at b") == 1
        assert [e.text for e in delivered] == ["then look at b"]  # type: ignore[attr-defined]
        assert "then look at b" not in json.dumps(api.requests[0].messages)
    finally:
        release.set()
        await session.close()
