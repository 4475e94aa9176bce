"""A task the server refused is shown struck through and marked as left out of the conversation (the next
request goes without it), and ``/resend`` sends it again as a task of its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, status, text
from tests.tui_helpers import screen_text, send, until


@pytest.mark.usefixtures("model_env")
async def test_a_refused_task_is_marked_and_resend_sends_it_again(api: FakeAnthropic, project: Path) -> None:
    """The server refuses the first task (400): it stays on screen marked left out; the next task goes alone;
    /resend sends the refused words again, as they were written."""
    api.script(
        status(400, "invalid_request_error", "messages: the request is malformed"),
        message(text("Second done.")),
        message(text("First done now.")),
    )
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "first task")
        await app.run_shown.wait()
        await until(pilot, lambda: "(left out: refused, /resend sends it again)" in screen_text(app), "marked")
        app.run_shown.clear()
        await send(pilot, "second task")
        await app.run_shown.wait()
        assert "first task" not in str(api.requests[1].messages)  # the refused words were not carried
        app.run_shown.clear()
        await send(pilot, "/resend")
        await app.run_shown.wait()
        await until(pilot, lambda: "First done now." in screen_text(app), "the answer to the words sent again")
    assert api.requests[2].messages[-1]["content"] == "first task"
