"""Answers that carry the person's words: a permission denied with a reason (the model reads it as the call's
result) and a plan sent back to be revised (the model gets what to change, the new plan is asked afresh), over
the loopback Messages API."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from chimera.core.events import PermissionRequested, PlanApproved, PlanProposed, StepEvent
from chimera.core.loops.questions import PlanQuestions
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def answering(session: Session, *answers: tuple[str, str | None]) -> list[StepEvent]:
    """Answer each question the run asks with the next of ``answers`` (on the loop's thread); the events seen."""
    seen: list[StepEvent] = []
    loop = asyncio.get_running_loop()
    left = list(answers)

    def answer(event: StepEvent) -> None:
        seen.append(event)
        asked = isinstance(event, PermissionRequested) or (isinstance(event, PlanProposed) and event.request_id)
        if asked and left:
            decision, words = left.pop(0)
            loop.call_soon_threadsafe(session.answer, event.request_id, decision, words)  # type: ignore[attr-defined]

    session.bus.subscribe(answer)
    return seen


@pytest.mark.usefixtures("model_env")
async def test_a_reason_for_no_reaches_the_model_as_the_result(api: FakeAnthropic, project: Path) -> None:
    """Denied with a reason, the call does not run and the next request's tool_result holds the reason."""
    api.script(
        message(tool_use("b1", "bash", {"command": "rm -rf build"}), stop_reason="tool_use"),
        message(text("Understood.")),
    )
    (project / "build").mkdir()
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="ask", interactive=True))
    answering(session, ("deny", "keep build, it holds the release"))
    try:
        await session.run("clean up")
    finally:
        await session.close()
    assert (project / "build").is_dir()
    result = json.dumps(api.requests[1].messages[-1])
    assert "tool_result" in result
    assert "keep build, it holds the release" in result


@pytest.mark.usefixtures("model_env")
async def test_a_plan_sent_back_is_revised_and_asked_again(api: FakeAnthropic, project: Path) -> None:
    """revise with words: the model is asked again with them, the new plan is proposed for a fresh answer."""
    api.script(
        message(text("- [ ] say hello")),
        message(text("- [ ] say hello\n- [ ] say goodbye")),
        message(text("Hello.")),
        message(text("Goodbye.")),
    )
    session = start_session(RunOptions(workdir=project, model=MODEL, interactive=True, verify="true"))
    seen = answering(session, ("revise", "also say goodbye"), ("approve", None))
    try:
        result = await session.run("greet", loop="plan")
        await session.bus.drain()
    finally:
        await session.close()
    assert result.success, result.error
    assert "also say goodbye" in json.dumps(api.requests[1].messages)
    proposed = [e for e in seen if isinstance(e, PlanProposed)]
    assert [e.steps for e in proposed] == [["say hello"], ["say hello", "say goodbye"]]
    assert all(e.request_id for e in proposed)
    assert proposed[0].request_id != proposed[1].request_id
    assert [e.steps for e in seen if isinstance(e, PlanApproved)] == [["say hello", "say goodbye"]]


async def test_a_revision_without_words_is_refused(project: Path) -> None:
    """revise needs what to change: an empty one is a ValueError naming it, not a silent approval."""
    questions = PlanQuestions()
    asked = asyncio.create_task(questions.ask(["a"], lambda _: None))
    await asyncio.sleep(0)
    request_id = questions.open()
    assert request_id is not None
    with pytest.raises(ValueError, match="what to change"):
        questions.answer(request_id, "revise", "  ")
    questions.cancel_all()
    assert (await asked).decision == "cancel"
