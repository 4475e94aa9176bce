"""A session id's unique beginning works wherever an id is taken; a shared or unknown one is one line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.session_helpers import sound_start

TWINS = ("18c0aa11", "18c0aa22")  # share the beginning 18c0a
ALONE = "18c0bb33"  # 18c0b begins only this one


@pytest.fixture
def sessions(isolated_env: Path, project: Path) -> Path:
    """Three sessions (hello, hi), two of whose ids begin alike."""
    for session_id in (*TWINS, ALONE):
        sound_start(isolated_env, session_id, project)
    return isolated_env


# Each command that takes a session id, with what follows the id.
COMMANDS = [
    ("tree", "--json"),
    ("export",),
    ("replay", "--json"),
    ("checkpoint", "mark"),
    ("switch", "u1", "--yes"),
]


@pytest.mark.usefixtures("sessions")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_unique_beginning_names_the_session(capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    """`chimera COMMAND 18c0b …` works on session 18c0bb33, as its whole id would."""
    verb, *rest = command
    code, out, err = chimera(capsys, verb, "18c0b", *rest)
    assert code == 0, err
    if verb == "tree":
        assert json.loads(out)["session_id"] == ALONE
    elif verb == "export":
        assert "hello" in out
    elif verb == "checkpoint":
        assert f"`chimera switch {ALONE} mark`" in out  # the way back names the whole id


@pytest.mark.usefixtures("sessions")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_shared_beginning_is_one_line_naming_the_candidates(
    capsys: pytest.CaptureFixture[str], isolated_env: Path, command: tuple[str, ...]
) -> None:
    """`chimera COMMAND 18c0a …` changes nothing and says, in one line, which sessions it begins."""
    verb, *rest = command
    before = {p: p.read_bytes() for p in (isolated_env / "sessions").glob("*/entries.jsonl")}
    code, out, err = chimera(capsys, verb, "18c0a", *rest)
    assert code == 2
    assert out == ""
    assert len(err) == 1, err
    assert all(twin in err[0] for twin in TWINS)
    assert "type more" in err[0]
    assert ALONE not in err[0]
    assert {p: p.read_bytes() for p in before} == before


@pytest.mark.usefixtures("sessions")
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_an_unknown_beginning_is_one_line(capsys: pytest.CaptureFixture[str], command: tuple[str, ...]) -> None:
    """`chimera COMMAND 19 …` (no id begins so) says there is no such session, in one line."""
    verb, *rest = command
    code, _, err = chimera(capsys, verb, "19", *rest)
    assert code == 2
    assert err == ["chimera: there is no session '19': `chimera sessions` lists them"]


@pytest.mark.usefixtures("model_env")
def test_run_resumes_by_a_unique_beginning(
    capsys: pytest.CaptureFixture[str], api: FakeAnthropic, sessions: Path
) -> None:
    """`chimera run TASK --resume 18c0b` continues session 18c0bb33: its earlier exchange is sent."""
    api.script(message(text("Hello again.")))
    code, out, err = chimera(capsys, "run", "again", "--resume", "18c0b", "--json")
    assert code == 0, err
    assert json.loads(out.splitlines()[0])["session_id"] == ALONE
    assert [m["role"] for m in api.requests[0].messages] == ["user", "assistant", "user"]
    with SessionStore.open(sessions, ALONE, writable=False) as store:
        assert len(store.tree) == 4


@pytest.mark.usefixtures("model_env", "sessions")
def test_run_with_a_shared_beginning_runs_nothing(capsys: pytest.CaptureFixture[str], api: FakeAnthropic) -> None:
    """`chimera run TASK --resume 18c0a` sends no request and names both sessions in one line."""
    code, _, err = chimera(capsys, "run", "again", "--resume", "18c0a")
    assert code == 2
    assert len(err) == 1
    assert all(twin in err[0] for twin in TWINS)
    assert api.requests == []


def test_an_exact_id_wins_over_longer_ones_it_begins(
    capsys: pytest.CaptureFixture[str], isolated_env: Path, project: Path
) -> None:
    """A whole id that also begins another (s1 and s10) names itself, never the longer one."""
    for session_id in ("s1", "s10"):
        sound_start(isolated_env, session_id, project)
    code, out, err = chimera(capsys, "tree", "s1", "--json")
    assert code == 0, err
    assert json.loads(out)["session_id"] == "s1"


def renamed(home: Path, session_id: str, name: str, *, keep: bool = False) -> Path:
    """Session ``session_id``'s folder under the name ``name`` (copied when ``keep``, else moved)."""
    folder, other = home / "sessions" / session_id, home / "sessions" / name
    if keep:
        shutil.copytree(folder, other, symlinks=True)
    else:
        folder.rename(other)
    return other


def files_of(home: Path) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in sorted((home / "sessions").rglob("*")) if p.is_file()}


@pytest.mark.usefixtures("model_env")
@pytest.mark.parametrize("command", [*COMMANDS, ("run", "again", "--resume")], ids=lambda c: c[0])
def test_a_folder_whose_name_is_not_its_sessions_id_is_refused_as_damaged(
    capsys: pytest.CaptureFixture[str], sessions: Path, api: FakeAnthropic, command: tuple[str, ...]
) -> None:
    """Session 18c0bb33's folder renamed 18c0cc44: every command named 18c0cc44 refuses it in one line saying
    whose it is and how to mend it, and nothing in the sessions folder changes (no request is sent)."""
    renamed(sessions, ALONE, "18c0cc44")
    before = files_of(sessions)
    verb, *rest = command
    args = (verb, *rest, "18c0cc44") if verb == "run" else (verb, "18c0cc44", *rest)
    code, out, err = chimera(capsys, *args)
    assert (code, out) == (2, "")
    assert len(err) == 1, err
    assert f"the session folder 18c0cc44 holds session {ALONE}" in err[0]
    assert f"rename it back to {ALONE}" in err[0]
    assert files_of(sessions) == before
    assert api.requests == []


@pytest.mark.usefixtures("model_env")
def test_a_beginning_resolves_on_ids_never_on_a_renamed_folder(
    capsys: pytest.CaptureFixture[str], sessions: Path
) -> None:
    """A copy of session 18c0aa11 named 18c0bb99 neither makes 18c0b ambiguous nor is 18c0b9 a session; the
    listing names the copy as damaged."""
    renamed(sessions, TWINS[0], "18c0bb99", keep=True)
    code, out, err = chimera(capsys, "tree", "18c0b", "--json")
    assert code == 0, err
    assert json.loads(out)["session_id"] == ALONE
    code, out, err = chimera(capsys, "tree", "18c0bb9", "--json")
    assert (code, err) == (2, ["chimera: there is no session '18c0bb9': `chimera sessions` lists them"])
    code, out, err = chimera(capsys, "sessions", "--json")
    assert sorted(s["id"] for s in json.loads(out)) == sorted((*TWINS, ALONE))
    assert any(f"18c0bb99 holds session {TWINS[0]}" in line for line in err), err
