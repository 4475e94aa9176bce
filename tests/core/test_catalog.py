"""The session catalog: what the picker lists comes from one small file, kept up to date by runs, rebuilt for
sessions it lacks, and never trusted beyond what it can hold."""

from __future__ import annotations

import fcntl
import json
import os
import stat
from pathlib import Path

import pytest

from chimera.core.sessions import catalog
from chimera.core.sessions.catalog import CATALOG
from chimera.core.sessions.listing import catalog_sessions, ordered
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.catalog_helpers import catalogued_sessions, write_session
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, tool_use


@pytest.fixture
def opened(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The ids of the sessions the listing opens (the real open, counted)."""
    seen: list[str] = []
    real = SessionStore.open.__func__  # type: ignore[attr-defined]

    def counted(cls: type[SessionStore], home: Path, session_id: str, *, writable: bool = True) -> SessionStore:
        seen.append(session_id)
        return real(cls, home, session_id, writable=writable)  # type: ignore[no-any-return]

    monkeypatch.setattr(SessionStore, "open", classmethod(counted))
    return seen


@pytest.mark.usefixtures("model_env")
async def test_a_run_puts_its_session_in_the_catalog(api: FakeAnthropic, isolated_env: Path, project: Path) -> None:
    """After a run that stops at its turn limit, the catalog has its title, workspace, turns and ending in words."""
    api.script(message(tool_use("t1", "glob", {"pattern": "*"}), stop_reason="tool_use"))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass", max_turns=1))
    try:
        await session.run("list the files")
    finally:
        await session.close()
    (entry,) = catalog_sessions(isolated_env)
    assert (entry.id, entry.title, entry.workdir, entry.turns) == (session.id, "list the files", str(project), 1)
    assert entry.ending is not None
    assert (entry.ending.state, entry.ending.why) == ("failed", "it reached the turn limit")
    assert stat.S_IMODE((isolated_env / CATALOG).stat().st_mode) == 0o600


@pytest.mark.usefixtures("model_env")
async def test_a_session_nobody_used_has_no_line(isolated_env: Path, project: Path) -> None:
    """A session started and closed before any task is nowhere: no folder, no catalog line."""
    session = start_session(RunOptions(workdir=project, model=MODEL))
    await session.close()
    assert catalog_sessions(isolated_env) == []
    assert not (isolated_env / CATALOG).exists()


def test_a_thousand_sessions_are_listed_without_opening_one(
    isolated_env: Path, project: Path, opened: list[str]
) -> None:
    """With every session in the catalog, listing 1,000 of them opens none of their files."""
    ids = catalogued_sessions(isolated_env, 1000, str(project))
    listed = catalog_sessions(isolated_env)
    assert [entry.id for entry in listed] == ids
    assert opened == []


def test_a_session_whose_files_cannot_be_read_is_listed_from_the_catalog(isolated_env: Path, project: Path) -> None:
    """A session whose entries and log are no longer readable as a session is still listed, as the catalog has it."""
    ids = catalogued_sessions(isolated_env, 3, str(project))
    folder = isolated_env / "sessions" / ids[0]
    for name in ("entries.jsonl", "events.jsonl"):
        path = folder / name
        path.write_bytes(b"\0" * path.stat().st_size)  # the same size: nothing says it changed
    listed = catalog_sessions(isolated_env)
    assert [e.id for e in listed] == ids
    assert (listed[0].title, listed[0].turns) == ("task 2", 1)
    assert listed[0].ending is not None
    assert listed[0].ending.state == "finished"


def test_sessions_the_catalog_lacks_are_read_once(isolated_env: Path, project: Path, opened: list[str]) -> None:
    """A home from before the catalog: its sessions are read the first time (title, turns, how the run ended)
    and their lines kept, so the next listing opens none."""
    write_session(isolated_env, "old1", str(project), "first", updated=1_000.0, answers=2)
    write_session(isolated_env, "old2", str(project), "second", updated=2_000.0, ending="failed")
    listed = catalog_sessions(isolated_env)
    assert {(e.id, e.title, e.turns, e.ending.brief if e.ending else None) for e in listed} == {
        ("old1", "first", 2, "finished"),
        ("old2", "second", 1, "failed: it reached the turn limit"),
    }
    assert sorted(opened) == ["old1", "old2"]
    opened.clear()
    assert catalog_sessions(isolated_env) == listed
    assert opened == []


def test_a_session_changed_behind_the_catalog_is_read_again(isolated_env: Path, project: Path) -> None:
    """A session whose entries grew without its line (a crash mid-run, another version) is listed as it is now."""
    ids = catalogued_sessions(isolated_env, 2, str(project))
    entries = isolated_env / "sessions" / ids[1] / "entries.jsonl"
    with entries.open("ab") as fh:
        answer = {"role": "assistant", "content": [{"type": "text", "text": "more"}]}
        line = {"t": "node", "id": "a9", "parent": "a0", "kind": "assistant", "ts": 5.0, "message": answer}
        fh.write(json.dumps(line).encode() + b"\n")
    turns = {entry.id: entry.turns for entry in catalog_sessions(isolated_env)}
    assert turns == {ids[0]: 1, ids[1]: 2}


def test_crafted_and_torn_lines_are_ignored(isolated_env: Path, project: Path) -> None:
    """Lines that are not patches (not JSON, wrong types, a path for an id, a session that does not exist, too
    deep, too long) and a torn last line change nothing; the next patch is not glued to the torn line."""
    ids = catalogued_sessions(isolated_env, 2, str(project))
    crafted = [
        b"not json",
        b"[1, 2]",
        b"nan",
        b"[" * 100_000 + b"]" * 100_000,
        json.dumps({"id": ids[0], "title": 7, "turns": "many", "updated": float("inf"), "ending": "done"}).encode(),
        json.dumps({"id": ids[0], "turns": True, "created": -5, "ending": {"state": "exploded", "why": ""}}).encode(),
        json.dumps({"id": "../../etc", "title": "elsewhere"}).encode(),
        json.dumps({"id": "ghost", "title": "x", "workdir": "/", "updated": 1.0, "size": 1, "ending": None}).encode(),
        json.dumps({"id": ids[1], "title": "x" * 70_000}).encode(),
        b'{"id": "' + ids[1].encode() + b'", "title": "torn',
    ]
    with (isolated_env / CATALOG).open("ab") as fh:
        fh.write(b"\n".join(crafted))  # no newline after the last: torn
    listed = catalog_sessions(isolated_env)
    assert [(e.id, e.title, e.turns) for e in listed] == [(ids[0], "task 1", 1), (ids[1], "task 0", 1)]
    assert all(e.ending is not None and e.ending.state == "finished" for e in listed)
    with SessionStore.open(isolated_env, ids[1]) as store:  # a writer closing adds a line after the torn one
        store.label("u1", "start")
    assert catalog_sessions(isolated_env)[1].updated > listed[1].updated


def test_terminal_escapes_in_a_title_are_kept_as_written(isolated_env: Path, project: Path) -> None:
    """The catalog keeps a title's characters exactly (what shows them makes them harmless)."""
    write_session(isolated_env, "esc", str(project), "\x1b]0;pwned\x07 title", updated=1_000.0)
    (entry,) = catalog_sessions(isolated_env)
    assert entry.title == "\x1b]0;pwned\x07 title"


def test_a_grown_catalog_is_rewritten_one_line_a_session(isolated_env: Path, project: Path) -> None:
    """Once it holds many lines a session, listing rewrites it to one line each, listing the same."""
    ids = catalogued_sessions(isolated_env, 2, str(project))
    for _ in range(100):
        with SessionStore.open(isolated_env, ids[0]) as store:
            store.label("u1", "again")
    first = catalog_sessions(isolated_env)
    assert len((isolated_env / CATALOG).read_bytes().splitlines()) == 2
    assert catalog_sessions(isolated_env) == first
    assert stat.S_IMODE((isolated_env / CATALOG).stat().st_mode) == 0o600


def test_this_workspaces_sessions_come_first(isolated_env: Path, tmp_path: Path) -> None:
    """Ordered for a workspace: its sessions first, newest first, then the others, newest first."""
    write_session(isolated_env, "here-old", "/here", "a", updated=1_000.0)
    write_session(isolated_env, "there-new", "/there", "b", updated=3_000.0)
    write_session(isolated_env, "here-new", "/here", "c", updated=2_000.0)
    write_session(isolated_env, "there-old", "/there", "d", updated=500.0)
    listed = catalog_sessions(isolated_env)
    assert [e.id for e in listed] == ["there-new", "here-new", "here-old", "there-old"]
    assert [e.id for e in ordered(listed, "/here")] == ["here-new", "here-old", "there-new", "there-old"]


@pytest.mark.usefixtures("model_env")
async def test_a_catalog_held_by_another_process_costs_only_its_line(
    api: FakeAnthropic, isolated_env: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another holds the catalog's lock and never lets go: the run still ends as it should, its line is left
    out (and rebuilt when the picker next reads the sessions)."""
    monkeypatch.setattr(catalog, "LOCK_WAIT", 0.05)
    (isolated_env / CATALOG).touch(mode=0o600)
    held = os.open(isolated_env / CATALOG, os.O_RDWR)
    fcntl.flock(held, fcntl.LOCK_EX)
    api.script(message(tool_use("t1", "glob", {"pattern": "*"}), stop_reason="tool_use"))
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass", max_turns=1))
    try:
        result = await session.run("list the files")
    finally:
        await session.close()
        os.close(held)
    assert result.reason == "max_turns"
    assert (isolated_env / CATALOG).read_bytes() == b""
    (entry,) = catalog_sessions(isolated_env)
    assert (entry.title, entry.ending.brief if entry.ending else None) == (
        "list the files",
        "failed: it reached the turn limit",
    )
