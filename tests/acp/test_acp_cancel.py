"""session/cancel stops a turn as Escape does in the workbench: during a command (it is killed, its call fails) and
during a question (the question is moot, nothing runs); the prompt answers cancelled at once, and the session
takes the next prompt."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from acp.schema import RequestPermissionResponse

from tests.acp_helpers import Agent, Asked, cancelled, of_kind, says
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

pytestmark = pytest.mark.asyncio(loop_scope="session")

PROMPTLY = 5.0  # seconds from session/cancel to the prompt's answer


async def test_cancel_during_a_command_kills_it_and_the_prompt_answers_cancelled(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """A command that would run for a minute is stopped: the prompt answers cancelled, the call failed, and the
    next prompt is a turn like any other."""
    api.script(
        message(tool_use("s1", "bash", {"command": "sleep 60 && touch too-late"}), stop_reason="tool_use"),
        message(text("Back again.")),
    )
    session = await agent.new_session(project, mode="bypass")
    turn = asyncio.create_task(agent.prompt(session, "wait a minute"))
    await agent.client.until(lambda: of_kind(agent.client.updates, "tool_call") or None, "the command start")
    sent = time.monotonic()
    await agent.conn.cancel(session_id=session)
    done = await turn
    took = time.monotonic() - sent
    again = await agent.prompt(session, "are you there?")

    assert done.stop_reason == "cancelled"
    assert took < PROMPTLY
    [end] = [u for u in of_kind(agent.client.updates, "tool_call_update") if u.status in ("completed", "failed")]
    assert end.status == "failed"
    assert again.stop_reason == "end_turn"
    assert says(agent.client.updates) == "Back again."
    assert not (project / "too-late").exists()


async def test_cancel_during_a_question_answers_cancelled_without_waiting_for_the_client(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """The run waits on a question; session/cancel stops it before the client answers: the prompt answers
    cancelled, the command never runs, and the client's late answer changes nothing."""
    api.script(message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"))
    released = asyncio.Event()

    async def later(asked: Asked) -> RequestPermissionResponse:
        await released.wait()
        return await cancelled(asked)

    agent.client.answer = later
    session = await agent.new_session(project)
    turn = asyncio.create_task(agent.prompt(session, "make the file"))
    await agent.client.until(lambda: agent.client.asked or None, "the question")
    await agent.conn.cancel(session_id=session)
    done = await asyncio.wait_for(turn, PROMPTLY)
    released.set()

    assert done.stop_reason == "cancelled"
    assert not (project / "made-it").exists()
    assert len(api.requests) == 1
