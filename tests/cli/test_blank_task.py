"""A task with nothing in it is refused before anything is sent: one line and exit 2 from
``chimera run``, with or without ``--resume``; the workbench sends no blank task either.

The real ``chimera`` against the loopback Messages API, and the workbench with Textual's Pilot.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.prompt_input import PromptInput
from tests.cli_runner import assert_one_line_error, run_here
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, message, text

BLANKS = ["", "   ", "\n\t \n", "\u00a0\u3000", "\u200b\ufeff\u200d", " \u200e "]


@pytest.mark.parametrize("task", BLANKS)
def test_a_blank_task_is_one_line_and_exit_2_with_nothing_sent(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, task: str
) -> None:
    """`chimera run TASK` with only spaces, line breaks or invisible characters: exit 2, one line, no request."""
    proc = run_here("run", task, "--workdir", str(project), env=model_env)
    assert_one_line_error(proc, "task")
    assert "chimera run" in proc.stderr  # the line shows what a task looks like
    assert api.requests == []
    assert not (isolated_env / "sessions").exists() or not any((isolated_env / "sessions").iterdir())


@pytest.mark.parametrize("task", ["", "  \n "])
def test_a_blank_task_for_a_resumed_session_changes_nothing(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, task: str
) -> None:
    """`chimera run --resume ID` with a blank task: exit 2, one line, no request, the session as it was."""
    api.script(message(text("Hello.")))
    first = run_here("run", "say hello", "--workdir", str(project), "--json", env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = json.loads(first.stdout.splitlines()[0])["session_id"]
    (folder,) = (isolated_env / "sessions").iterdir()
    before = {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()}

    proc = run_here("run", task, "--resume", session_id, "--workdir", str(project), env=model_env)
    assert_one_line_error(proc, "task")
    assert len(api.requests) == 1  # only the first run's
    assert {p.name: p.read_bytes() for p in folder.iterdir() if p.is_file()} == before


@pytest.mark.parametrize("typed", ["   ", "\u200b", " \u200b\u2060 "])
async def test_the_workbench_sends_no_blank_task(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, typed: str
) -> None:
    """Enter on an input holding only blanks or invisible characters starts no run and sends nothing."""
    app = build_app(RunOptions(workdir=project, model=DEFAULT_MODEL))
    async with app.run_test(size=(100, 30)) as pilot:
        prompt = app.query_one(PromptInput)
        prompt.focus()
        prompt.value = typed
        await pilot.press("enter")
        await pilot.pause()
        assert not app.running
        assert api.requests == []
