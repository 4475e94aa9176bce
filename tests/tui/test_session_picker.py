"""The session picker (`chimera --resume` with no id, and `/sessions`): newest first, this workspace's first,
each with how its last run ended; typing filters; enter resumes; escape closes and nothing is made."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.pilot import Pilot

from chimera.core.sessions.catalog import note
from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.store import SessionStore
from chimera.tui.app import build_app
from chimera.tui.picker_app import PickerApp
from chimera.tui.screens.sessions import SessionPicker
from chimera.tui.widgets.session_list import SessionList
from tests.catalog_helpers import write_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.tui_helpers import said, screen_text, until

HERE = "/work/alpha"
THERE = "/work/beta"


def sessions_in(home: Path) -> list[str]:
    folder = home / "sessions"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def four(isolated_env: Path) -> list[str]:
    """Four sessions in two workspaces, minutes to days old; their ids in the order the picker lists them."""
    now = time.time()
    write_session(isolated_env, "18c0aa01", THERE, "tidy the README", updated=now - 330)
    write_session(isolated_env, "18c0aa02", HERE, "fix the median", updated=now - 3.5 * 3600, answers=2)
    write_session(isolated_env, "18c0bb03", HERE, "add a CLI", updated=now - 2.5 * 86400, ending="failed")
    write_session(isolated_env, "18c0cc04", THERE, "profile the parser", updated=now - 1.5 * 86400)
    return ["18c0aa02", "18c0bb03", "18c0aa01", "18c0cc04"]


def listed(app: App[Any]) -> list[str]:
    return [entry.id for entry in app.screen.query_one(SessionList).rows]


async def shown(pilot: Pilot[Any], app: App[Any]) -> None:
    """Wait until the picker has read the catalog and drawn its rows."""
    await until(pilot, lambda: isinstance(app.screen, SessionPicker) and app.screen.sessions is not None, "rows")
    await pilot.pause()


async def test_newest_first_this_workspaces_first_with_endings_in_words(four: list[str]) -> None:
    """The workspace's sessions first, each part newest first; each row says how its run ended, its age, its
    turns, its workspace and its id."""
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, app)
        assert listed(app) == four
        screen = screen_text(app)
        assert "4 sessions, newest first, this workspace's first" in screen
        lines = [" ".join(line.strip(" │▌").split()) for line in screen.splitlines()]  # runs of spaces as one
        at = lines.index(next(line for line in lines if line.startswith("fix the median")))
        assert lines[at : at + 8] == [
            "fix the median 18c0aa02",
            "finished · 3 h ago · 2 turns · /work/alpha",
            "add a CLI 18c0bb03",
            "failed: it reached the turn limit · 2 days ago · 1 turn · /work/alpha",
            "tidy the README 18c0aa01",
            "finished · 5 min ago · 1 turn · /work/beta",
            "profile the parser 18c0cc04",
            "finished · yesterday · 1 turn · /work/beta",
        ]


async def test_typing_filters_by_title_workspace_or_id(four: list[str]) -> None:
    """Each typed word narrows the list (title, workspace or id; an id's beginning finds its session);
    deleting it brings them back; a filter nothing matches says so."""
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, app)
        await pilot.press(*"the")
        assert listed(app) == ["18c0aa02", "18c0aa01", "18c0cc04"]
        await pilot.press(*" beta")
        assert listed(app) == ["18c0aa01", "18c0cc04"]
        assert "2 of 4 sessions match “the beta”" in screen_text(app)
        await pilot.press(*["backspace"] * 9, *"18c0b")
        assert listed(app) == ["18c0bb03"]
        await pilot.press(*"zz")
        await pilot.pause()
        assert listed(app) == []
        assert "No session matches “18c0bzz” (of 4)." in screen_text(app)
        await pilot.press(*["backspace"] * 7)
        assert listed(app) == four


async def test_escape_closes_and_makes_no_session(four: list[str], isolated_env: Path) -> None:
    """Escape ends the picker with nothing chosen; the sessions are as they were, and none is added."""
    before = sessions_in(isolated_env)
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, app)
        await pilot.press("escape")
    assert app.return_value is None
    assert sessions_in(isolated_env) == before


@pytest.mark.usefixtures("model_env")
async def test_enter_resumes_the_chosen_session(api: FakeAnthropic, isolated_env: Path, project: Path) -> None:
    """Moving down and pressing enter chooses that session; the workbench then opens it with its history."""
    api.script(message(text("The median is fixed.")), message(text("Added the CLI.")))
    made = []
    for task in ("fix the median", "add a CLI"):
        first = build_app(RunOptions(workdir=project, model=MODEL))
        async with first.run_test(size=(80, 24)) as pilot:
            await pilot.click("#prompt")
            await pilot.press(*task, "enter")
            await first.run_shown.wait()
        made.append(first.session.id)
    picker = PickerApp(project.resolve())
    async with picker.run_test(size=(80, 24)) as pilot:
        await shown(pilot, picker)
        assert listed(picker) == made[::-1]
        await pilot.press("down", "enter")
    assert picker.return_value == made[0]
    app = build_app(RunOptions(resume=picker.return_value, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.history_shown.wait()
        await pilot.pause()
        assert said(app) == ["fix the median"]
        assert "The median is fixed." in screen_text(app)


@pytest.mark.usefixtures("model_env")
async def test_a_session_chosen_in_the_workbench_opens_next(four: list[str], project: Path) -> None:
    """Pushed over the workbench (as `/sessions` does), choosing a session closes the workbench to open it."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(SessionPicker(HERE), app.sessions.resume)
        await shown(pilot, app)
        await pilot.press(*"CLI", "enter")
        await until(pilot, lambda: not app.is_running, "the workbench closed")
    assert app.resume_next == "18c0bb03"


@pytest.mark.usefixtures("model_env")
async def test_closing_the_picker_in_the_workbench_changes_nothing(four: list[str], project: Path) -> None:
    """Escape over the workbench: back to it, nothing to open next."""
    app = build_app(RunOptions(workdir=project, model=MODEL))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        app.push_screen(SessionPicker(HERE), app.sessions.resume)
        await shown(pilot, app)
        await pilot.press("escape")
        await until(pilot, lambda: not isinstance(app.screen, SessionPicker), "back at the workbench")
        assert app.is_running
    assert app.resume_next is None


def branched(home: Path, session_id: str, task: str, workdir: Path) -> None:
    """A session whose active branch holds 2 answers and the branch it left 3 (4 answers in all)."""
    say = {"role": "assistant", "content": [{"type": "text", "text": "done"}]}
    with SessionStore.create(home, session_id, workdir=workdir, model=MODEL) as store:
        store.add("user", {"role": "user", "content": task}, sync=True)
        first = store.add("assistant", say, sync=True)
        for words in ("left behind", "and on"):
            store.add("user", {"role": "user", "content": words}, sync=True)
            store.add("assistant", say, sync=True)
        store.add("user", {"role": "user", "content": "taken instead"}, parent=first.id, sync=True)
        store.add("assistant", say, sync=True)


async def test_a_branched_session_shows_the_turns_of_its_active_branch(isolated_env: Path, project: Path) -> None:
    """A session of 2 answers on its active branch and 3 on a branch left shows 2 turns in the picker, whether
    its catalog line is the store's own or one an older Chimera wrote counting every branch (4)."""
    branched(isolated_env, "18c0ee06", "ours", project)
    branched(isolated_env, "18c0ee07", "older", project)
    catalog = isolated_env / "session-catalog.jsonl"
    kept = [line for line in catalog.read_bytes().splitlines(keepends=True) if b'"18c0ee07"' not in line]
    catalog.write_bytes(b"".join(kept))
    size = (isolated_env / "sessions" / "18c0ee07" / "entries.jsonl").stat().st_size
    older = {"title": "older", "workdir": str(project), "updated": time.time(), "turns": 4, "size": size}
    note(isolated_env, "18c0ee07", {**older, "ending": None})
    app = PickerApp(project)
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, app)
        rows = [line for line in screen_text(app).splitlines() if "turn" in line]
        assert len(rows) == 2
        assert all("· 2 turns ·" in row for row in rows), rows


async def test_a_crafted_title_shows_escaped_never_as_markup(isolated_env: Path) -> None:
    """A title holding terminal escapes and markup is shown as its characters, escaped; nothing is run or styled."""
    write_session(isolated_env, "crafted", HERE, "\x1b]0;pwned\x07 [bold red]x[/] \x1b[2J", updated=time.time() - 90)
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, app)
        screen = screen_text(app)
        assert "\\x1b]0;pwned\\x07 [bold red]x[/] \\x1b[2J" in screen
        assert "\x1b" not in screen


async def test_a_session_whose_files_cannot_be_read_is_still_listed(four: list[str], isolated_env: Path) -> None:
    """Listed from the catalog: a session whose entries are no longer readable still shows its title."""
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, app)  # the first reading keeps their lines in the catalog
    entries = isolated_env / "sessions" / "18c0bb03" / "entries.jsonl"
    entries.write_bytes(b"\0" * entries.stat().st_size)
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(120, 40)) as pilot:
        await shown(pilot, app)
        assert listed(app) == four
        assert "add a CLI" in screen_text(app)


async def test_a_crafted_catalog_line_shows_escaped_and_opens_only_its_session(isolated_env: Path) -> None:
    """A catalog line written by someone else (a title with terminal escapes, an id that is a path, a torn
    line) is shown escaped or not at all; enter on it gives back only its session's id."""
    size = write_session(isolated_env, "18c0dd05", HERE, "plain", updated=time.time() - 90)
    lines = [
        b'{"id": "18c0dd05", "title": "\\u001b[31mred\\u001b[0m \\u0007bell", "workdir": "/work/alpha",'
        + f' "updated": {time.time() - 90}, "size": {size}, "active_turns": 1, "ending": null}}'.encode(),
        b'{"id": "../../../etc", "title": "elsewhere", "workdir": "/", "updated": 1.0, "size": 1, "ending": null}',
        b'{"id": "18c0dd05", "title": "to',
    ]
    (isolated_env / "session-catalog.jsonl").write_bytes(b"\n".join(lines))
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(80, 24)) as pilot:
        await shown(pilot, app)
        assert listed(app) == ["18c0dd05"]
        screen = screen_text(app)
        assert "\\x1b[31mred\\x1b[0m \\x07bell" in screen
        assert "no run yet" in screen
        assert "elsewhere" not in screen
        await pilot.press("enter")
    assert app.return_value == "18c0dd05"


async def test_a_home_that_cannot_hold_sessions_is_said_in_the_picker(isolated_env: Path) -> None:
    """CHIMERA_HOME/sessions is a file: the picker says why nothing can be listed, and escape still closes."""
    (isolated_env / "sessions").write_text("not a folder")
    app = PickerApp(Path(HERE))
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: "set CHIMERA_HOME" in screen_text(app), "the reason on screen")
        await pilot.press("escape")
    assert app.return_value is None
