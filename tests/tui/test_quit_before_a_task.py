"""A workbench opened and quit before any task leaves no session behind; the first task makes it, whole."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.store import SessionStore
from chimera.tui.app import build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import send


def session_folders(home: Path) -> list[Path]:
    folder = home / "sessions"
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.is_dir() else []


@pytest.mark.usefixtures("model_env")
async def test_quitting_before_any_task_leaves_no_session(isolated_env: Path, project: Path) -> None:
    """`chimera`, then ctrl+q with nothing typed: there are as many sessions as before (none)."""
    before = session_folders(isolated_env)
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+q")
    assert session_folders(isolated_env) == before == []


@pytest.mark.usefixtures("model_env")
async def test_the_first_task_records_the_whole_session(api: FakeAnthropic, isolated_env: Path, project: Path) -> None:
    """The first task brings the session to disk: its header (workspace, permissions), the task, the answer,
    and an event log that begins with the run's start."""
    api.script(message(text("Hello.")))
    app = build_app(RunOptions(workdir=project, model=MODEL, permission_mode="accept-edits"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "say hello")
        await app.run_shown.wait()
    (folder,) = session_folders(isolated_env)
    assert folder.name == app.session.id
    with SessionStore.open(isolated_env, folder.name, writable=False) as store:
        assert store.title == "say hello"
        assert [node.kind for node in store.tree.path()] == ["user", "assistant"]
        assert store.meta["permissions"]["mode"] == "accept-edits"
        assert Path(store.meta["workdir"]) == project.resolve()
    kinds = [json.loads(line)["type"] for line in (folder / "events.jsonl").read_text().splitlines()]
    assert kinds[0] == "run_started"
    assert kinds[-1] == "run_finished"
