"""Words a run ended with no answer to (a task the server refused, the model declined, or the person interrupted
before an answer) stay in the session, marked, and are never sent again unless asked: the next request holds
only the next task, every reader of the session says so, and ``Session.resend`` sends them again. Driven over
the real ``anthropic`` client against the loopback Messages API."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path

import pytest

from chimera.core.bus import EventBus
from chimera.core.errors import ConfigError
from chimera.core.events import RunFinished, StepEvent
from chimera.core.sessions.export import export_markdown
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.reading import Reader, Task, model_context, summary
from chimera.core.sessions.replay import replay_session
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from chimera.tui.state.transcript import Transcript
from chimera.tui.tree_command import tree_document
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, status, text, tool_use

BAD = status(400, "invalid_request_error", "messages.0.content.0.image.source: invalid base64 data")


def open_session(project: Path, **options: object) -> tuple[Session, list[StepEvent]]:
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass", **options))  # type: ignore[arg-type]
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    return session, seen


def ends(seen: list[StepEvent]) -> list[RunFinished]:
    return [e for e in seen if isinstance(e, RunFinished)]


def said(api: FakeAnthropic, index: int) -> list[object]:
    """The messages of request ``index``, each as its text (or its blocks)."""
    return [m["content"] for m in api.requests[index].messages]


@pytest.mark.usefixtures("model_env")
async def test_a_refused_task_is_not_sent_with_the_next_and_can_be_sent_again(
    api: FakeAnthropic, project: Path
) -> None:
    """A 400 on a task: the next request holds only the next task; the refused one is marked in the tree and
    the event, and resend() sends it again, alone, after what the conversation holds now."""
    api.script(BAD, message(text("Second done.")), message(text("First done.")))
    session, seen = open_session(project)
    try:
        refused = await session.run("first, with a broken attachment")
        assert (refused.success, refused.reason) == (False, "bad_request")
        await session.run("second")
        assert said(api, 1) == ["second"]  # the refused task is not carried into later requests

        first = next(iter(session.store.tree.nodes))
        await session.bus.drain()
        assert [(e.left_out, e.left_out_nodes) for e in ends(seen)] == [("refused", [first]), ("", [])]
        reading = Reader(session.store.tree).read(first)
        assert isinstance(reading, Task)
        assert reading.left_out == "refused"
        assert summary(reading) == "[left out: refused] first, with a broken attachment"
        assert session.last_left_out() == first

        again = await session.resend(first)
        assert again.success
        assert said(api, 2) == ["second", [{"type": "text", "text": "Second done."}], "first, with a broken attachment"]
        assert session.last_left_out() == first  # still marked: the new task is a node of its own
        assert len([n for n in session.store.tree.nodes.values() if n.kind == "user"]) == 3
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_every_reader_of_the_session_tells_the_refused_task_as_left_out(
    api: FakeAnthropic, project: Path, isolated_env: Path
) -> None:
    """Read back from disk (resumed, with and without its event log): the model's context leaves the refused
    task out, the history marks it on screen, the export and `chimera tree` say so, a replay plays it as
    refused, and a resumed run's request holds only what the conversation holds."""
    api.script(BAD, message(text("Second done.")))
    session, _ = open_session(project)
    try:
        await session.run("first")
        await session.run("second")
    finally:
        await session.close()

    with SessionStore.open(isolated_env, session.id, writable=False) as store:
        first = next(iter(store.tree.nodes))
        assert store.tree.left_out == {first: "refused"}
        assert [m["content"] for m in model_context(store.tree).messages] == [
            "second",
            [{"type": "text", "text": "Second done."}],
        ]
        shown = Transcript()
        shown.apply_all(branch_events(store))
        user = [entry for entry in shown.entries if entry.kind == "user"]
        assert [(entry.text, entry.data.get("left_out")) for entry in user] == [("first", "refused"), ("second", None)]
        assert any("left out of the conversation (the server refused it)" in e.text for e in shown.entries)
        assert "*(left out of the conversation \\(the server refused it\\)" in export_markdown(store)
        nodes = {node["id"]: node for node in tree_document(store)["nodes"]}
        assert nodes[first]["left_out"] == "refused"
        assert nodes[first]["summary"] == "[left out: refused] first"

        replayed: list[StepEvent] = []
        bus = EventBus()
        bus.subscribe(replayed.append)
        report = await replay_session(
            store.tree, workspace=project, original_workspace=project, spill_dir=isolated_env / "spill", bus=bus
        )
        await bus.drain()
        assert (report.success, report.runs) == (True, 2)
        assert [(e.reason, e.left_out) for e in ends(replayed)] == [("bad_request", "refused"), ("completed", "")]

    (store.folder / "events.jsonl").unlink()  # the log lost: the tree alone still says how the run ended
    with SessionStore.open(isolated_env, session.id, writable=False) as store:
        shown = Transcript()
        shown.apply_all(branch_events(store))
        assert [e.data.get("left_out") for e in shown.entries if e.kind == "user"] == ["refused", None]

    api.script(message(text("Third done.")))
    resumed, _ = open_session(project, resume=session.id)
    try:
        await resumed.run("third")
    finally:
        await resumed.close()
    assert said(api, 2) == ["second", [{"type": "text", "text": "Second done."}], "third"]


@pytest.mark.usefixtures("model_env")
async def test_a_task_interrupted_before_any_answer_is_left_out_and_one_answered_stays(
    api: FakeAnthropic, project: Path
) -> None:
    """Interrupted while the first answer streams: the task leaves the conversation (the event and the screen
    say so) and the next request holds only the next task. Interrupted after an answer whose call ran: the task
    and the call stay, as the screen shows them."""
    release, reached = threading.Event(), threading.Event()
    api.script(
        paused(message(text("Let me think about that at length.")), release, reached),
        message(tool_use("g1", "glob", {"pattern": "*"}), stop_reason="tool_use"),
        paused(message(text("Found nothing much, and")), release2 := threading.Event(), reached2 := threading.Event()),
        message(text("Fourth done.")),
    )
    session, seen = open_session(project)
    shown = Transcript()
    session.bus.subscribe(shown.apply)
    try:
        run = asyncio.create_task(session.run("first, stopped at once"))
        assert await asyncio.to_thread(reached.wait, 10)
        session.interrupt()
        assert (await asyncio.wait_for(run, 10)).reason == "interrupted"
        release.set()

        run = asyncio.create_task(session.run("third, stopped after a call"))
        assert await asyncio.to_thread(reached2.wait, 10)
        session.interrupt()
        assert (await asyncio.wait_for(run, 10)).reason == "interrupted"
        release2.set()
        await session.run("fourth")
        await session.bus.drain()
    finally:
        release.set()
        release2.set()
        await session.close()
    assert said(api, 1) == ["third, stopped after a call"]
    last = said(api, 3)
    assert last[0] == "third, stopped after a call"
    assert last[-1][-1] == {"type": "text", "text": "fourth"}  # type: ignore[index]
    assert [e.left_out for e in ends(seen)] == ["interrupted", "", ""]
    user = [(entry.text, entry.data.get("left_out")) for entry in shown.entries if entry.kind == "user"]
    assert user == [("first, stopped at once", "interrupted"), ("third, stopped after a call", None), ("fourth", None)]
    notices = [entry.text for entry in shown.entries if entry.kind == "notice"]
    assert any("(it was interrupted before any answer)" in line for line in notices)


@pytest.mark.usefixtures("model_env")
async def test_resend_names_what_it_cannot_send_again(api: FakeAnthropic, project: Path) -> None:
    """resend() of a task the model has, of an answer, or of no node at all is refused in one line."""
    api.script(message(text("Done.")))
    session, _ = open_session(project)
    try:
        await session.run("a task")
        task, answer = (node.id for node in session.store.tree.path())
        with pytest.raises(ConfigError, match="part of the conversation already"):
            await session.resend(task)
        with pytest.raises(ConfigError, match="not your task or steering"):
            await session.resend(answer)
        with pytest.raises(ConfigError, match="has no node"):
            await session.resend("nope")
        assert session.last_left_out() is None
        assert len(api.requests) == 1
    finally:
        await session.close()


def test_a_crafted_mark_cannot_leave_out_results_or_answers(isolated_env: Path, project: Path) -> None:
    """A left_out record naming tool results (their call would go unanswered) or an answer is skipped with a
    warning; one naming the person's message is read."""
    with SessionStore.create(isolated_env, "s1", workdir=project, model=MODEL) as store:
        task = store.add("user", {"role": "user", "content": "go"}).id
        call = {"type": "tool_use", "id": "t", "name": "glob", "input": {}}
        answer = store.add("assistant", {"role": "assistant", "content": [call]}).id
        results = store.add(
            "tool_result", {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "x"}]}
        ).id
        with pytest.raises(ValueError, match="only user messages"):
            store.leave_out([results], "refused")
        entries = store.folder / "entries.jsonl"
    with entries.open("a") as fh:
        for ids, why in (([results], "refused"), ([answer], "declined"), ([task], "bored"), ([task], "refused")):
            fh.write(json.dumps({"t": "left_out", "ids": ids, "why": why}) + "\n")
    with SessionStore.open(isolated_env, "s1", writable=False) as store:
        assert store.tree.left_out == {task: "refused"}
        assert len(store.warnings) == 3
