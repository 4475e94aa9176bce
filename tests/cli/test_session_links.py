"""A session folder whose files are links, FIFOs or folders is refused in one line; nothing outside it is written.

Each crafted session sits beside a sound one. ``sessions`` lists the sound one
and names the crafted one's file and the fix; ``tree``, ``export``, ``run
--resume`` and ``switch`` refuse it in one line; the file a link points at (a
file of the person's, the workspace's own ``.git``) is byte for byte as it was.
What could block (a FIFO, a link to ``/dev/zero``) runs in a real ``chimera``
process with a deadline.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.sessions.checkpoints import ShadowRepo
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera, run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.session_helpers import sound_start


def digest(path: Path) -> dict[str, str]:
    """Every file at or under ``path`` (links not followed) with the hash of its bytes or its link target."""
    paths = [path] if not path.is_dir() or path.is_symlink() else sorted(path.rglob("*"))
    out = {}
    for p in paths:
        if p.is_symlink():
            out[str(p)] = "-> " + os.readlink(p)
        elif p.is_file():
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
        elif p.is_dir():
            out[str(p)] = "dir"
    return out


Craft = Callable[[Path, Path, Path], Path]
"""Spoils a session folder (given the folder, a file of the person's and the workspace); returns what must stay."""


def lock_link(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "lock").unlink()
    (folder / "lock").symlink_to(victim)
    return victim


def entries_link(folder: Path, victim: Path, project: Path) -> Path:
    shutil.move(folder / "entries.jsonl", victim)  # a real session's entries, kept elsewhere
    (folder / "entries.jsonl").symlink_to(victim)
    return victim


def events_link(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "events.jsonl").symlink_to(victim)
    return victim


def checkpoints_link(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "checkpoints.git").symlink_to(project / ".git")
    return project / ".git"


def checkpoints_hold_a_link(folder: Path, victim: Path, project: Path) -> Path:
    shutil.rmtree(folder / "checkpoints.git" / "refs")
    (folder / "checkpoints.git" / "refs").symlink_to(project / ".git" / "refs")
    return project / ".git"


def checkpoints_commondir(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "checkpoints.git" / "commondir").write_text(str(project / ".git") + "\n")
    return project / ".git"


def checkpoints_a_gitfile(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "checkpoints.git").write_text(f"gitdir: {project / '.git'}\n")
    return project / ".git"


def folder_link(folder: Path, victim: Path, project: Path) -> Path:
    elsewhere = victim.parent / "elsewhere"
    shutil.move(folder, elsewhere)
    folder.symlink_to(elsewhere, target_is_directory=True)
    return elsewhere


def entries_hard_link(folder: Path, victim: Path, project: Path) -> Path:
    shutil.copy(folder / "entries.jsonl", victim)
    (folder / "entries.jsonl").unlink()
    os.link(victim, folder / "entries.jsonl")
    return victim


def events_folder(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "events.jsonl").mkdir()
    return victim


def lock_folder(folder: Path, victim: Path, project: Path) -> Path:
    (folder / "lock").unlink()
    (folder / "lock").mkdir()
    return victim


CRAFTS: dict[str, tuple[Craft, str, str]] = {  # (craft, the name the line gives, the fix it gives)
    "lock a link": (lock_link, "lock", "remove the link"),
    "entries a link": (entries_link, "entries.jsonl", "remove the link"),
    "events a link": (events_link, "events.jsonl", "remove the link"),
    "checkpoints a link to the workspace's .git": (checkpoints_link, "checkpoints.git", "remove the link"),
    "checkpoints a gitfile": (checkpoints_a_gitfile, "checkpoints.git", "remove it"),
    "the session folder a link": (folder_link, "s1", "remove the link"),
    "events a folder": (events_folder, "events.jsonl", "remove it"),
    "lock a folder": (lock_folder, "lock", "remove it"),
}


@pytest.mark.parametrize("name", list(CRAFTS))
@pytest.mark.usefixtures("model_env")
def test_a_session_whose_files_are_links_is_refused_and_nothing_outside_is_written(
    name: str,
    api: FakeAnthropic,
    git_project: Path,
    tmp_path: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """sessions names the file and the fix; tree, export, resume, switch and checkpoint refuse; the target is intact."""
    craft, named, fix = CRAFTS[name]
    sound_start(isolated_env, "good", git_project)
    sound_start(isolated_env, "s1", git_project)
    victim = tmp_path / "precious.txt"
    victim.write_text("the person's own file\n")
    kept = craft(isolated_env / "sessions" / "s1", victim, git_project)
    before = {**digest(kept), **digest(victim), **digest(git_project)}

    code, out, err = chimera(capsys, "sessions", "--json")
    assert code == 0
    assert [info["id"] for info in json.loads(out)] == ["good"]
    assert len(err) == 1, err
    assert named in err[0]
    assert fix in err[0]

    for args in (
        ("tree", "s1"),
        ("export", "s1"),
        ("run", "go on", "--resume", "s1"),
        ("switch", "s1", "u1", "--yes"),
        ("checkpoint", "s1", "here"),
        ("replay", "s1", "--rerun-tools"),
    ):
        code, out, err = chimera(capsys, *args)
        assert code == 2, (args, out, err)
        assert len(err) == 1, (args, err)
        assert named in err[0], (args, err)
        assert fix in err[0], (args, err)
    assert api.requests == []
    assert {**digest(kept), **digest(victim), **digest(git_project)} == before

    code, out, err = chimera(capsys, "tree", "good")
    assert (code, err) == (0, [])


@pytest.mark.usefixtures("model_env")
def test_a_session_file_with_another_name_is_read_but_never_written(
    api: FakeAnthropic, git_project: Path, tmp_path: Path, isolated_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """entries.jsonl hard-linked to a file elsewhere: listed and read, but resume and switch refuse to write it."""
    sound_start(isolated_env, "s1", git_project)
    victim = tmp_path / "precious.jsonl"
    entries_hard_link(isolated_env / "sessions" / "s1", victim, git_project)
    before = digest(victim)
    code, out, err = chimera(capsys, "tree", "s1")
    assert (code, err) == (0, [])
    for args in (("run", "go on", "--resume", "s1"), ("switch", "s1", "u1", "--yes")):
        code, out, err = chimera(capsys, *args)
        assert code == 2, (args, out, err)
        assert len(err) == 1, (args, err)
        assert "entries.jsonl has another name" in err[0]
    assert api.requests == []
    assert digest(victim) == before


INSIDE: dict[str, tuple[Craft, str, str]] = {
    "checkpoints holding a link": (checkpoints_hold_a_link, "refs", "remove the link"),
    "checkpoints with a commondir": (checkpoints_commondir, "commondir", "remove"),
}


@pytest.mark.parametrize("name", list(INSIDE))
@pytest.mark.usefixtures("model_env")
def test_a_shadow_repository_holding_a_way_out_is_never_run(
    name: str,
    api: FakeAnthropic,
    git_project: Path,
    tmp_path: Path,
    isolated_env: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The conversation still reads; switch, checkpoint and replay refuse; a resumed run goes on, checkpoints off."""
    craft, named, fix = INSIDE[name]
    api.script(
        message(tool_use("w1", "write", {"path": "a.txt", "content": "v1\n"}), stop_reason="tool_use"),
        message(text("Wrote v1.")),
    )
    code, out, err = chimera(
        capsys, "run", "write", "--workdir", str(git_project), "--permission-mode", "bypass", "--json"
    )
    assert code == 0, err
    session_id = json.loads(out.splitlines()[0])["session_id"]
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        first = store.tree.path()[0].id
    kept = craft(isolated_env / "sessions" / session_id, tmp_path / "unused", git_project)
    before = {**digest(kept), **digest(git_project)}

    code, out, err = chimera(capsys, "tree", session_id)
    assert (code, err) == (0, [])
    for args in (
        ("switch", session_id, first, "--yes"),
        ("checkpoint", session_id, "here"),
        ("replay", session_id, "--rerun-tools"),
    ):
        code, out, err = chimera(capsys, *args)
        assert code == 2, (args, out, err)
        assert len(err) == 1, (args, err)
        assert named in err[0], (args, err)
        assert fix in err[0], (args, err)
    api.script(message(text("Resumed.")))
    code, out, err = chimera(capsys, "run", "go on", "--resume", session_id)
    assert code == 0, err
    warning, kept_line = err
    assert kept_line.startswith(f"chimera: session {session_id}: ")
    assert "checkpoints are off" in warning
    assert named in warning
    assert {**digest(kept), **digest(git_project)} == before


BLOCKING = {
    "events a FIFO": ("events.jsonl", lambda folder: os.mkfifo(folder / "events.jsonl")),
    "entries a FIFO": ("entries.jsonl", lambda folder: _replace_with_fifo(folder / "entries.jsonl")),
    "lock a FIFO": ("lock", lambda folder: _replace_with_fifo(folder / "lock")),
    "entries a link to /dev/zero": ("entries.jsonl", lambda folder: _replace_with_link(folder / "entries.jsonl")),
}


def _replace_with_fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _replace_with_link(path: Path) -> None:
    path.unlink()
    path.symlink_to("/dev/zero")


@pytest.mark.parametrize("name", list(BLOCKING))
def test_a_session_file_that_could_block_is_refused_at_once(
    name: str, api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """A FIFO, or a link to a device that never ends: every command answers in one line, none hangs."""
    named, spoil = BLOCKING[name]
    sound_start(isolated_env, "good", tmp_path)
    sound_start(isolated_env, "s1", tmp_path)
    spoil(isolated_env / "sessions" / "s1")

    listed = run_here("sessions", "--json", timeout=20)
    assert listed.returncode == 0, listed.stderr
    assert [info["id"] for info in json.loads(listed.stdout)] == ["good"]
    (line,) = listed.stderr.strip().splitlines()
    assert named in line
    for args in (("tree", "s1"), ("export", "s1"), ("run", "go on", "--resume", "s1")):
        proc = run_here(*args, env=model_env, timeout=20)
        assert proc.returncode == 2, (args, proc.stderr)
        (line,) = proc.stderr.strip().splitlines()
        assert named in line
        assert "remove" in line


def test_opening_a_session_file_never_follows_a_link_swapped_in_later(tmp_path: Path, isolated_env: Path) -> None:
    """Even past the folder check (a link made after the store opened), the event log and the lock refuse links."""
    sound_start(isolated_env, "s1", tmp_path)
    folder = isolated_env / "sessions" / "s1"
    victim = tmp_path / "precious.txt"
    victim.write_text("the person's own file\n")
    with SessionStore.open(isolated_env, "s1") as store:
        (folder / "events.jsonl").symlink_to(victim)
        with pytest.raises(ConfigError, match=r"events\.jsonl is a link.*remove the link"):
            SessionLog(store.folder)
    (folder / "events.jsonl").unlink()
    (folder / "events.jsonl").symlink_to("/dev/zero")
    with pytest.raises(ConfigError, match=r"events\.jsonl is a link"):
        SessionLog(folder)
    assert victim.read_text() == "the person's own file\n"


def test_a_shadow_repository_is_never_the_workspace_git_directory(git_project: Path, tmp_path: Path) -> None:
    """The workspace's .git, a folder in it, or a workspace inside a .git: ShadowRepo refuses before git runs."""
    before = digest(git_project / ".git")
    for git_dir, workspace in (
        (git_project / ".git", git_project),
        (git_project / ".git" / "shadow", git_project),
        (git_project / ".GIT" / "x", git_project),
        (git_project, git_project),
        (tmp_path, git_project),  # it would hold the workspace
        (tmp_path / "shadow.git", git_project / ".git"),
        (tmp_path / "shadow.git", git_project / ".git" / "hooks"),
    ):
        with pytest.raises(ConfigError):
            ShadowRepo(workspace, git_dir).snapshot()
    link = tmp_path / "link.git"
    link.symlink_to(git_project / ".git")
    with pytest.raises(ConfigError, match="link"):
        ShadowRepo(git_project, link).snapshot()
    assert digest(git_project / ".git") == before


def test_a_shadow_repository_swapped_for_a_link_later_is_refused_at_the_next_git_call(
    git_project: Path, tmp_path: Path
) -> None:
    """A link put in place of the shadow repository after it was checked is refused before git runs there."""
    repo = ShadowRepo(git_project, tmp_path / "shadow.git")
    repo.snapshot()
    before = digest(git_project / ".git")
    (tmp_path / "shadow.git").rename(tmp_path / "moved.git")
    (tmp_path / "shadow.git").symlink_to(git_project / ".git")
    (git_project / "a.txt").write_text("new\n")
    with pytest.raises(ConfigError, match="is a link"):
        repo.snapshot()
    assert digest(git_project / ".git") == before


def test_a_fifo_for_the_workspace_exclude_file_does_not_block_a_snapshot(git_project: Path, tmp_path: Path) -> None:
    """The workspace's .git/info/exclude as a FIFO is read as empty, never opened blocking."""
    (git_project / ".git" / "info").mkdir(exist_ok=True)
    exclude = git_project / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    (git_project / "a.txt").write_text("a\n")
    repo = ShadowRepo(git_project, tmp_path / "shadow.git")
    assert "a.txt" in repo.files(repo.snapshot())
