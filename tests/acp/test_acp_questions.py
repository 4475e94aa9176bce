"""Questions through `chimera acp`: a call the permission mode asks about becomes session/request_permission with
allow_once, allow_always (the rule it keeps in its name) and reject_once; a client that cancels or errors refuses
it, and the turn goes on; a plan run's plan comes as a `plan` update and is approved through a question that
shows it, its entries then checked off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.acp_helpers import Agent, Answer, Client, acp_agent, cancelled, choose, fails, of_kind, says
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

pytestmark = pytest.mark.asyncio(loop_scope="session")


def touch_twice() -> list[Any]:
    """The model makes a file with one command, then runs the same command again, then says it is done."""
    return [
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("Done.")),
    ]


def result_told(api: FakeAnthropic, request: int) -> str:
    """The tool result the model was sent in request number ``request``."""
    blocks = api.requests[request].messages[-1]["content"]
    return str(next(b for b in blocks if b["type"] == "tool_result")["content"])


async def test_allow_once_runs_the_call_and_asks_again_next_time(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """Allowed once, the command runs, and the same command is asked about again; the turn ends end_turn."""
    api.script(*touch_twice())
    agent.client.answer = choose("allow_once")
    session = await agent.new_session(project)
    done = await agent.prompt(session, "make the file")
    asked = agent.client.asked

    assert done.stop_reason == "end_turn"
    assert (project / "made-it").exists()
    assert len(asked) == 2
    first = asked[0]
    assert [(o.kind, o.name) for o in first.options] == [
        ("allow_once", "Allow once"),
        ("allow_always", "Always allow bash(touch made-it)"),
        ("reject_once", "Deny"),
    ]
    assert (first.tool_call.title, first.tool_call.kind) == ("touch made-it", "execute")
    started = of_kind(agent.client.updates, "tool_call")
    assert first.tool_call.tool_call_id == started[0].tool_call_id  # the question is about the call shown
    told = [
        u.status for u in of_kind(agent.client.updates, "tool_call_update") if u.tool_call_id == started[0].tool_call_id
    ]
    assert told == ["in_progress", "completed"]  # allowed, it runs, then it ends: in that order


async def test_allow_always_keeps_the_rule_so_the_same_call_is_not_asked_again(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """Always allowed, the same command runs unasked the second time."""
    api.script(*touch_twice())
    agent.client.answer = choose("allow_always")
    session = await agent.new_session(project)
    done = await agent.prompt(session, "make the file")

    assert done.stop_reason == "end_turn"
    assert len(agent.client.asked) == 1
    ends = [u.status for u in of_kind(agent.client.updates, "tool_call_update") if u.status != "in_progress"]
    assert ends == ["completed", "completed"]


@pytest.mark.parametrize(
    ("answer", "how"),
    [(choose("reject_once"), "denied"), (cancelled, "cancelled"), (fails, "an error")],
    ids=["reject_once", "cancelled", "error"],
)
async def test_a_refusal_declines_the_call_and_the_turn_goes_on(
    api: FakeAnthropic, agent: Agent, project: Path, answer: Answer, how: str
) -> None:
    """Denied, answered cancelled, or answered with a JSON-RPC error: the command does not run, the model reads
    that the person declined it, and the turn goes on to its end."""
    api.script(
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"), message(text("OK."))
    )
    agent.client.answer = answer
    session = await agent.new_session(project)
    done = await agent.prompt(session, "make the file")

    assert done.stop_reason == "end_turn", how
    assert not (project / "made-it").exists()
    assert "declined" in result_told(api, 1)
    assert says(agent.client.updates) == "OK."
    [end] = [u for u in of_kind(agent.client.updates, "tool_call_update") if u.status]
    assert end.status == "failed"


PLAN = "Here is the plan:\n\n- [ ] Write `out.txt` saying hello\n- [ ] Say it is done\n"


async def test_a_plan_is_shown_approved_through_a_question_and_checked_off(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """/plan: the plan arrives as a plan update, its approval is a question holding the plan; approved, it is
    carried out, each entry marked completed, and the file is written."""
    api.script(
        message(text(PLAN)),
        message(tool_use("w1", "write", {"path": "out.txt", "content": "hello\n"}), stop_reason="tool_use"),
        message(text("Step 1 is done.")),
        message(text("DONE")),
        message(text("Nothing more to do.")),
        message(text("DONE")),
    )
    agent.client.answer = choose("allow_once")
    session = await agent.new_session(project, mode="bypass")
    done = await agent.prompt(session, "/plan write out.txt")
    seen = agent.client.updates
    [asked] = agent.client.asked

    assert done.stop_reason == "end_turn"
    assert (project / "out.txt").read_text() == "hello\n"
    plans = of_kind(seen, "plan")
    steps = ["Write `out.txt` saying hello", "Say it is done"]
    assert [e.content for e in plans[0].entries] == steps
    assert [e.status for e in plans[0].entries] == ["pending", "pending"]
    assert asked.tool_call.title == "Approve the plan?"
    assert all(step in asked.tool_call.content[0].content.text for step in steps)
    assert [o.kind for o in asked.options] == ["allow_once", "reject_once"]
    assert [e.status for e in plans[1].entries] == ["in_progress", "pending"]  # approved: the first step is worked on
    assert [e.status for e in plans[-1].entries] == ["completed", "completed"]


async def test_a_plan_refused_is_cancelled_and_nothing_changes(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Refusing the plan's question cancels the plan: no step runs, the turn ends and says the plan was cancelled."""
    api.script(message(text(PLAN)))
    async with acp_agent(model_env, project, "--loop", "plan", client=Client(choose("reject_once"))) as agent:
        session = await agent.new_session(project)
        done = await agent.prompt(session, "write out.txt")

    assert done.stop_reason == "end_turn"
    assert not (project / "out.txt").exists()
    assert "cancelled" in says(agent.client.updates)
    assert len(api.requests) == 1
