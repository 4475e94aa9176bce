"""``Session.configure`` and ``Session.run(task, loop=…)``: the strategy, model and permission mode of the next
runs change between runs, over the loopback Messages API; a bad name changes nothing and says the choices."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.events import PermissionRequested, PlanProposed, RunStarted, StepEvent, ToolCallFinished
from chimera.core.home import chimera_home
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use


def opened(project: Path, **options: object) -> tuple[Session, list[StepEvent]]:
    session = start_session(RunOptions(workdir=project, model=MODEL, **options))  # type: ignore[arg-type]
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    return session, seen


def started(seen: list[StepEvent]) -> list[tuple[str, str]]:
    return [(e.model, e.loop) for e in seen if isinstance(e, RunStarted)]


@pytest.mark.usefixtures("model_env")
async def test_the_next_run_asks_the_model_chosen(api: FakeAnthropic, project: Path) -> None:
    """After configure(model=…) the next request names that model, and run_started says so."""
    api.script(message(text("One.")), message(text("Two.")))
    session, seen = opened(project)
    try:
        await session.run("first")
        session.configure(model="claude-haiku-4-5")
        await session.run("second")
        await session.bus.drain()
    finally:
        await session.close()
    assert [r.body["model"] for r in api.requests] == [MODEL, "claude-haiku-4-5"]
    assert started(seen) == [(MODEL, "react"), ("claude-haiku-4-5", "react")]
    assert session.model == "claude-haiku-4-5"


@pytest.mark.usefixtures("model_env")
async def test_the_next_run_plans_first_when_the_strategy_is_plan(api: FakeAnthropic, project: Path) -> None:
    """configure(loop="plan") makes the next run plan-and-execute: a plan is proposed, then carried out."""
    api.script(message(text("- [ ] say hello")), message(text("Hello.")))
    session, seen = opened(project, approve_plan=True, verify="true")
    try:
        session.configure(loop="plan")
        result = await session.run("greet")
        await session.bus.drain()
    finally:
        await session.close()
    assert result.success, result.error
    assert started(seen) == [(MODEL, "plan")]
    assert [e.steps for e in seen if isinstance(e, PlanProposed)] == [["say hello"]]
    assert session.loop_name == "plan"


@pytest.mark.usefixtures("model_env")
async def test_a_strategy_for_one_task_leaves_the_next_as_before(api: FakeAnthropic, project: Path) -> None:
    """run(task, loop="plan") plans that task only; the next task runs with the session's strategy again."""
    api.script(message(text("- [ ] say hello")), message(text("Hello.")), message(text("Plain.")))
    session, seen = opened(project, approve_plan=True, verify="true")
    try:
        await session.run("greet", loop="plan")
        await session.run("again")
        await session.bus.drain()
    finally:
        await session.close()
    assert started(seen) == [(MODEL, "plan"), (MODEL, "react")]
    assert session.loop_name == "react"


@pytest.mark.usefixtures("model_env")
async def test_plan_mode_refuses_the_next_runs_writes_and_is_recorded(api: FakeAnthropic, project: Path) -> None:
    """configure(mode="plan") refuses a write in the next run; the session records the mode for replays."""
    api.script(
        message(tool_use("w1", "write", {"path": "a.txt", "content": "x"}), stop_reason="tool_use"),
        message(text("Could not write.")),
    )
    session, seen = opened(project, permission_mode="bypass")
    try:
        session.configure(mode="plan")
        await session.run("write a")
        await session.bus.drain()
    finally:
        await session.close()
    assert not (project / "a.txt").exists()
    assert [e.status for e in seen if isinstance(e, ToolCallFinished)] == ["refused"]
    assert session.policy.mode == "plan"
    with SessionStore.open(chimera_home(), session.id, writable=False) as store:
        assert store.meta["permissions"]["mode"] == "plan"


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"loop": "treeish"}, "the strategy 'treeish' is unknown: use one of react, plan, reflexion, tot"),
        ({"mode": "yolo"}, "the permission mode 'yolo' is unknown: use one of ask, accept-edits, plan, bypass"),
        ({"model": "  "}, "is not a model name"),
        ({"model": "claude sonnet"}, "is not a model name"),
        ({"loop": "plan", "mode": "nope"}, "the permission mode 'nope' is unknown"),
    ],
)
@pytest.mark.usefixtures("model_env")
async def test_a_name_that_does_not_exist_changes_nothing(project: Path, change: dict[str, str], words: str) -> None:
    """A bad strategy, mode or model name is one ConfigError naming the choices; nothing changed, not even a part."""
    session, _ = opened(project)
    try:
        with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
            session.configure(**change)
        assert (session.loop_name, session.model, session.policy.mode) == ("react", MODEL, "ask")
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_nothing_changes_while_a_run_goes(api: FakeAnthropic, project: Path) -> None:
    """While a run works, configure refuses in one line saying to wait or interrupt."""
    reached, release = threading.Event(), threading.Event()
    api.script(paused(message(text("Slow.")), release, reached))
    session, _ = opened(project)
    try:
        task = asyncio.ensure_future(session.run("slow"))
        assert await asyncio.to_thread(reached.wait, 10)
        with pytest.raises(ConfigError, match="a run is going: interrupt it or let it finish"):
            session.configure(model="other")
        release.set()
        await task
    finally:
        await session.close()
    assert session.model == MODEL


async def test_the_demo_cannot_change_its_model(project: Path) -> None:
    """The demo replays a recording: configure says how to connect a model instead."""
    session = start_session(RunOptions(workdir=project))
    try:
        with pytest.raises(ConfigError, match="the demo plays a recording: set ANTHROPIC_API_KEY"):
            session.configure(loop="plan")
    finally:
        await session.close()


@pytest.mark.usefixtures("model_env")
async def test_a_new_mode_keeps_what_the_person_always_allowed(api: FakeAnthropic, project: Path) -> None:
    """A command answered "always" in ask mode still runs unasked after the mode changes to accept-edits."""
    call = {"command": "echo hi >> log"}
    api.script(
        message(tool_use("b1", "bash", call), stop_reason="tool_use"),
        message(text("Once.")),
        message(tool_use("b2", "bash", call), stop_reason="tool_use"),
        message(text("Twice.")),
    )
    session, _ = opened(project, interactive=True)
    asked: list[str] = []
    loop = asyncio.get_running_loop()

    def answer(event: StepEvent) -> None:  # on the bus's thread: the answer goes to the loop's
        if isinstance(event, PermissionRequested):
            asked.append(event.request_id)
            loop.call_soon_threadsafe(session.answer, event.request_id, "always")

    session.bus.subscribe(answer)
    try:
        await session.run("log once")
        session.configure(mode="accept-edits")
        await session.run("log again")
    finally:
        await session.close()
    assert len(asked) == 1
    assert (project / "log").read_text() == "hi\nhi\n"
