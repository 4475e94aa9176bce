"""The session's commands in the workbench: ``/new`` opens a fresh session in the same workspace, ``/export``
writes Markdown and says where, ``/sessions`` opens the session picker, ``/replay`` says
how to watch the session again."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from chimera.core.home import chimera_home
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from chimera.core.wording import shown_path
from chimera.tui.app import ChimeraApp, build_app
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import entries, said, screen_text, send, toasts, until


async def run(pilot: Pilot[int], app: ChimeraApp, task: str) -> None:
    await send(pilot, task)
    await app.run_shown.wait()
    await until(pilot, lambda: not app.running, f"{task!r} to end")
    app.run_shown.clear()


@pytest.mark.usefixtures("model_env")
async def test_new_starts_a_fresh_session_with_the_same_choices(api: FakeAnthropic, project: Path) -> None:
    """/new: another session id, an empty conversation and no earlier turn sent; the strategy chosen before
    stays; the first session keeps its own turns."""
    api.script(message(text("First answer.")), message(text("Fresh answer.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(160, 40)) as pilot:  # room on the status line for the session's id
        await run(pilot, app, "first task")
        first = app.session.id
        await send(pilot, "/mode accept-edits")
        await send(pilot, "/new")
        await until(pilot, lambda: app.session.id != first and "A new session" in screen_text(app), "a new session")
        assert said(app) == []
        assert not entries(app, "text")
        assert (app.state.status.input_tokens, app.state.status.mode) == (0, "accept-edits")
        await run(pilot, app, "fresh task")
        second = app.session.id
    assert [m["role"] for m in api.requests[1].messages] == ["user"]  # nothing of the first session
    assert "first task" not in str(api.requests[1].messages)
    with SessionStore.open(chimera_home(), first, writable=False) as old:
        assert old.title == "first task"
    with SessionStore.open(chimera_home(), second, writable=False) as new:
        assert new.title == "fresh task"
        assert new.workdir == old.workdir


@pytest.mark.usefixtures("model_env")
async def test_new_says_the_session_is_kept_once_it_has_a_task(api: FakeAnthropic, project: Path) -> None:
    """/new names no id that nothing could find (the session is kept from its first task on): it says when it is
    kept, and neither the screen nor the footer offers what the empty session does not have (its tree); after
    its first task the status line shows its id, which names a session kept on disk."""
    api.script(message(text("First answer.")), message(text("Fresh answer.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(160, 40)) as pilot:  # room on the status line for the session's id
        await run(pilot, app, "first task")
        first = app.session.id
        await send(pilot, "/new")
        await until(pilot, lambda: app.session.id != first and "A new session" in screen_text(app), "a new session")
        shown = screen_text(app)
        kept = f"A new session in {shown_path(project)}: it is kept once you send it a task."
        assert [e.text for e in entries(app, "notice")] == [kept]
        assert app.session.id not in shown
        assert not app.session.store.folder.exists()
        assert "session tree" not in shown.splitlines()[-1]  # the footer: ctrl+t has nothing to show yet
        await run(pilot, app, "fresh task")
        assert f"#{app.session.id[:8]}" in screen_text(app)
        assert app.session.store.folder.exists()


@pytest.mark.parametrize("target", ["", "notes/out.md", "ABSOLUTE"])
@pytest.mark.usefixtures("model_env")
async def test_export_writes_markdown_and_says_where(
    api: FakeAnthropic, project: Path, tmp_path: Path, target: str
) -> None:
    """/export [FILE]: the session as Markdown in the workspace (chimera-ID.md by default, a relative FILE
    there too, an absolute one where it says); one line names the file."""
    api.script(message(text("The **answer**.")))
    (project / "notes").mkdir()
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(160, 40)) as pilot:
        await run(pilot, app, "explain it")
        typed = str(tmp_path / "elsewhere.md") if target == "ABSOLUTE" else target
        await send(pilot, f"/export {typed}".strip())
        expected = Path(typed) if target == "ABSOLUTE" else project / (target or f"chimera-{app.session.id}.md")
        await until(pilot, expected.exists, "the file")
        await until(pilot, lambda: f"Exported this session as Markdown to {expected}" in screen_text(app), "where")
    document = expected.read_text()
    assert "explain it" in document
    assert "The **answer**." in document


@pytest.mark.usefixtures("model_env")
async def test_export_to_a_folder_that_is_missing_says_so(api: FakeAnthropic, project: Path) -> None:
    api.script(message(text("Ok.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(120, 40)) as pilot:
        await run(pilot, app, "do it")
        await send(pilot, "/export missing/out.md")
        await until(pilot, lambda: "/export cannot write" in toasts(app), "the answer")
        assert "No such file or directory" in toasts(app)


@pytest.mark.usefixtures("model_env")
async def test_sessions_opens_the_picker_with_this_workspaces_sessions_first(
    api: FakeAnthropic, project: Path, tmp_path: Path
) -> None:
    """/sessions opens the session picker: this workspace's sessions first, newest first, another folder's after."""
    elsewhere = tmp_path / "other"
    elsewhere.mkdir()
    api.script(message(text("Old.")), message(text("Other.")), message(text("Now.")))
    for folder, task in ((project, "an older task"), (elsewhere, "another folder's task")):
        session = start_session(RunOptions(workdir=folder, model=MODEL))
        await session.run(task)
        await session.close()
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(160, 40)) as pilot:
        await run(pilot, app, "the task now")
        await send(pilot, "/sessions")
        await until(pilot, lambda: "Resume a session" in screen_text(app), "the picker")
        await until(pilot, lambda: "another folder's task" in screen_text(app), "its rows")
        shown = screen_text(app)
    now, older, other = (shown.index(t) for t in ("the task now", "an older task", "another folder's task"))
    assert now < older < other


@pytest.mark.usefixtures("model_env")
async def test_replay_says_how_to_watch_the_session_again(api: FakeAnthropic, project: Path) -> None:
    api.script(message(text("Ok.")))
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(160, 40)) as pilot:
        await send(pilot, "/replay")
        await until(pilot, lambda: "/replay has nothing to work with yet" in toasts(app), "nothing yet")
        app.query_one("#prompt").value = ""  # type: ignore[attr-defined]
        await run(pilot, app, "do it")
        await send(pilot, "/replay")
        await until(pilot, lambda: f"chimera replay {app.session.id}" in screen_text(app), "how")
