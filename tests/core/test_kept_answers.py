"""An "always" answer with a rule the person wrote, the answers kept listed, and one taken back: over the loopback
Messages API, with real tool calls (a call that runs leaves its file behind)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.events import PermissionRequested, StepEvent
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def bash(call_id: str, command: str) -> object:
    return message(tool_use(call_id, "bash", {"command": command}), stop_reason="tool_use")


def asking(session: Session, answers: list[tuple[str, str]]) -> list[PermissionRequested]:
    """Answer each permission question with the next of ``answers`` (decision, words); the questions asked."""
    asked: list[PermissionRequested] = []
    loop = asyncio.get_running_loop()

    def answer(event: StepEvent) -> None:
        if isinstance(event, PermissionRequested):
            asked.append(event)
            decision, words = answers.pop(0) if answers else ("deny", "")
            loop.call_soon_threadsafe(session.answer, event.request_id, decision, words)

    session.bus.subscribe(answer)
    return asked


@pytest.mark.usefixtures("model_env")
async def test_a_rule_written_in_the_answer_is_what_runs_unasked(api: FakeAnthropic, project: Path) -> None:
    """`always` with bash(touch made-*): the next matching command runs unasked, another is still asked."""
    api.script(
        bash("b1", "touch made-1"),
        bash("b2", "touch made-2"),
        bash("b3", "touch other"),
        message(text("Done.")),
    )
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="ask", interactive=True))
    asked = asking(session, [("always", "bash(touch made-*)"), ("deny", "")])
    try:
        await session.run("make the files")
        assert session.kept == ["bash(touch made-*)"]
    finally:
        await session.close()
    assert [q.args["command"] for q in asked] == ["touch made-1", "touch other"]
    assert (project / "made-1").exists()
    assert (project / "made-2").exists()
    assert not (project / "other").exists()


@pytest.mark.usefixtures("model_env")
async def test_a_kept_answer_taken_back_is_asked_again(api: FakeAnthropic, project: Path) -> None:
    """`always` on a command, then /mode's forget: the same command is asked about again in the next run."""
    api.script(bash("b1", "touch a"), message(text("Made.")), bash("b2", "touch a"), message(text("Again.")))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="ask", interactive=True))
    asked = asking(session, [("always", ""), ("allow", "")])
    try:
        await session.run("make a")
        assert session.kept == ["bash(touch a)"]
        assert session.forget(1) == "bash(touch a)"
        assert session.kept == []
        await session.run("make a again")
    finally:
        await session.close()
    assert len(asked) == 2


def test_a_written_rule_must_be_for_the_tool_asked_about() -> None:
    """A rule for another tool, one that is not a rule, or a bash chain is refused in a line; nothing is kept."""
    policy = PermissionPolicy("ask")
    for text_, why in [
        ("read", "is not about bash"),
        ("*", "is not about bash"),
        ("bash(make && rm -rf /)", "one command"),
        ("bash(make", "not understood"),
    ]:
        with pytest.raises(ConfigError, match=why.replace("(", r"\(")):
            policy.keeping(text_, "bash", ["bash", "read"])
    assert policy.kept == ()


def test_an_edit_rule_covers_write_too_and_forgetting_keeps_the_rules_given_at_start() -> None:
    """edit(src/**) kept on an edit call allows write there too; taking it back leaves --allow's own rule."""
    policy = PermissionPolicy.build("ask", allow=["edit(src/**)"])
    kept = policy.keeping("edit(src/**)", "edit", ["edit", "write"])
    assert kept.kept[0].words == "edit(src/**), write(src/**)"
    assert kept.decide("write", {"path": "src/a.py", "content": ""}, read_only=False).verdict == "allow"
    back = kept.forgetting(0)
    assert back.allow == policy.allow
    assert back.decide("write", {"path": "src/a.py", "content": ""}, read_only=False).verdict == "ask"
    assert back.decide("edit", {"path": "src/a.py", "old": "", "new": ""}, read_only=False).verdict == "allow"


def test_forgetting_an_exact_command_another_answer_also_allows_keeps_it_allowed() -> None:
    """Two answers that allowed the same command: taking back one leaves it allowed by the other."""
    policy = PermissionPolicy("ask").remembering("bash", {"command": "make"}).remembering("bash", {"command": "make"})
    once = policy.forgetting(0)
    assert once.decide("bash", {"command": "make"}, read_only=False).verdict == "allow"
    assert once.forgetting(0).decide("bash", {"command": "make"}, read_only=False).verdict == "ask"
