"""Workspace checkpoints: snapshots in a shadow git repository, and restores that lose nothing."""

from __future__ import annotations

import hashlib
import os
import random
import stat
import subprocess
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError, WorkspaceError
from chimera.core.sessions.checkpoints import CheckpointError, ShadowRepo

ODD_NAME = "naïve name\nwith newline ✓.txt"
PAST = 1_000_000_000  # a fixed mtime in 2001: whatever the restore rewrites gets a new one


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


@pytest.fixture
def repo(workspace: Path, tmp_path: Path) -> ShadowRepo:
    return ShadowRepo(workspace, tmp_path / "shadow.git")


def _git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_DATE="@1 +0000", GIT_COMMITTER_DATE="@1 +0000")
    settings = ["-c", "user.name=person", "-c", "user.email=person@example.com", "-c", "commit.gpgSign=false"]
    run = subprocess.run(["git", *settings, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True)
    return run.stdout


def _state(folder: Path) -> dict[str, tuple[str, bytes]]:
    """Every file and symlink under ``folder`` (but .git): its kind and exec bit, and its bytes or link target."""
    found: dict[str, tuple[str, bytes]] = {}
    for root, dirs, names in os.walk(folder):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in names + [d for d in dirs if os.path.islink(os.path.join(root, d))]:
            full = Path(root, name)
            rel = full.relative_to(folder).as_posix()
            if full.is_symlink():
                found[rel] = ("link", os.fsencode(os.readlink(full)))
            else:
                kind = "exec" if os.stat(full).st_mode & stat.S_IXUSR else "file"
                found[rel] = (kind, full.read_bytes())
    return found


def _versions(folder: Path, *paths: str) -> set[tuple[str, str]]:
    """(path, git blob id) of each file as it is now: a ``known`` set that covers exactly these contents."""
    out = set()
    for path in paths:
        data = (folder / path).read_bytes()
        out.add((path, hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()))
    return out


def _tree_hash(folder: Path) -> str:
    """A digest of every name, mode and byte under ``folder``."""
    digest = hashlib.sha256()
    for root, dirs, names in sorted(os.walk(folder)):
        dirs.sort()
        for name in sorted(names + dirs):
            full = Path(root, name)
            info = os.lstat(full)
            digest.update(f"{full.relative_to(folder)}\0{info.st_mode}\0".encode())
            if stat.S_ISREG(info.st_mode):
                digest.update(full.read_bytes())
            elif stat.S_ISLNK(info.st_mode):
                digest.update(os.fsencode(os.readlink(full)))
    return digest.hexdigest()


def _first_version(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("print('one')\n")
    (ws / "run.sh").write_text("#!/bin/sh\necho run\n")
    (ws / "run.sh").chmod(0o755)
    (ws / "notes.md").write_text("untouched\n")
    (ws / ODD_NAME).write_text("odd one\n")
    (ws / "crlf.txt").write_bytes(b"line\r\nline\r\n")
    (ws / ".gitattributes").write_text("* text=auto eol=lf ident\n")  # the shadow must store raw bytes
    (ws / "ident.txt").write_text("$Id: kept as written $\n")
    os.symlink("src/app.py", ws / "app-link")


def _second_version(ws: Path) -> None:
    (ws / "src" / "app.py").write_text("print('two')\n")
    (ws / "run.sh").chmod(0o644)
    (ws / ODD_NAME).write_text("odd two\n")
    (ws / "app-link").unlink()
    os.symlink("notes.md", ws / "app-link")
    (ws / "src" / "new module.py").write_text("x = 1\n")
    (ws / "crlf.txt").write_bytes(b"other\r\n")
    (ws / "ident.txt").write_text("$Id: changed $\n")


def test_switch_back_and_forth_restores_files_exactly(workspace: Path, repo: ShadowRepo) -> None:
    """Restoring one snapshot then the other gives back each version byte for byte, exec bit and symlink."""
    _first_version(workspace)
    one = repo.snapshot("one")
    state_one = _state(workspace)
    _second_version(workspace)
    two = repo.snapshot("two")
    state_two = _state(workspace)
    assert state_one != state_two
    known = repo.seen([one, two])
    for target, wanted in ((one, state_one), (two, state_two), (one, state_one), (two, state_two)):
        repo.restore(target, known=known)
        assert _state(workspace) == wanted
    assert state_one["crlf.txt"] == ("file", b"line\r\nline\r\n")
    assert state_one["ident.txt"] == ("file", b"$Id: kept as written $\n")
    assert state_one["run.sh"][0] == "exec"
    assert state_one["app-link"] == ("link", b"src/app.py")


def test_only_changed_paths_are_rewritten(workspace: Path, repo: ShadowRepo) -> None:
    """A restore leaves files whose content did not change alone: same inode, same mtime."""
    _first_version(workspace)
    one = repo.snapshot()
    _second_version(workspace)
    for path in (workspace / "notes.md", workspace / "src" / "app.py"):
        os.utime(path, (PAST, PAST))
    inode = (workspace / "notes.md").stat().st_ino
    result = repo.restore(one, known=repo.seen([one]))
    assert "notes.md" not in result.preview.changed
    assert (workspace / "notes.md").stat().st_mtime == PAST
    assert (workspace / "notes.md").stat().st_ino == inode
    assert (workspace / "src" / "app.py").stat().st_mtime != PAST


def test_a_persons_new_file_survives_a_restore(workspace: Path, repo: ShadowRepo) -> None:
    """A file the person made that no snapshot saw is kept, and the preview says so."""
    _first_version(workspace)
    one = repo.snapshot()
    _second_version(workspace)
    two = repo.snapshot()
    (workspace / "mine.txt").write_text("my own notes\n")
    (workspace / "src" / "draft.py").write_text("draft\n")
    result = repo.restore(one, known=repo.seen([one, two]))
    assert (workspace / "mine.txt").read_text() == "my own notes\n"
    assert (workspace / "src" / "draft.py").read_text() == "draft\n"
    assert result.preview.keep == ("mine.txt", "src/draft.py")


def test_files_the_agent_created_after_the_target_are_deleted(workspace: Path, repo: ShadowRepo) -> None:
    """Files a later snapshot saw are deleted when switching back, with the agent's folders they leave empty."""
    (workspace / "main.py").write_text("main\n")
    one = repo.snapshot()
    (workspace / "pkg" / "sub").mkdir(parents=True)
    (workspace / "pkg" / "sub" / "mod.py").write_text("mod\n")
    (workspace / "helper.py").write_text("helper\n")
    two = repo.snapshot()
    result = repo.restore(one, known=repo.seen([one, two]), folders={"pkg", "pkg/sub"})
    assert result.preview.delete == ("helper.py", "pkg/sub/mod.py")
    assert result.preview.remove_folders == ("pkg/sub", "pkg")
    assert sorted(os.listdir(workspace)) == ["main.py"]


def test_folders_the_agent_did_not_make_are_kept_with_their_modes(workspace: Path, repo: ShadowRepo) -> None:
    """Emptied by the deletions, the person's folders stay (mode and empty sub-folders too); the agent's go."""
    one = repo.snapshot()
    (workspace / "mine" / "inner").mkdir(parents=True)
    (workspace / "mine").chmod(0o750)
    (workspace / "mine" / "agent.txt").write_text("agent\n")
    (workspace / "gen" / "theirs").mkdir(parents=True)
    (workspace / "gen" / "theirs" / "agent.txt").write_text("agent\n")
    (workspace / "gen" / "kept").mkdir()
    two = repo.snapshot()
    preview = repo.changes(one, known=repo.seen([one, two]), folders={"gen", "gen/theirs", "mine/inner"})
    assert preview.keep_folders == ("mine",)
    assert preview.remove_folders == ("gen/theirs",)
    repo.restore(one, known=repo.seen([one, two]), folders={"gen", "gen/theirs", "mine/inner"})
    assert stat.S_IMODE((workspace / "mine").stat().st_mode) == 0o750
    assert (workspace / "mine" / "inner").is_dir()  # already empty: the switch did not empty it
    assert sorted(p.relative_to(workspace).as_posix() for p in workspace.rglob("*")) == [
        "gen",
        "gen/kept",
        "mine",
        "mine/inner",
    ]


def test_the_users_git_folder_is_never_touched(workspace: Path, repo: ShadowRepo) -> None:
    """Snapshots, previews, restores and pruning leave every byte of the workspace's .git as it was."""
    _git(workspace, "init", "-q", "-b", "main")
    _first_version(workspace)
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "first")
    (workspace / "notes.md").write_text("staged change\n")
    _git(workspace, "add", "notes.md")
    (workspace / ".git" / "info").mkdir(exist_ok=True)
    before = _tree_hash(workspace / ".git")
    one = repo.snapshot()
    _second_version(workspace)
    two = repo.snapshot()
    known = repo.seen([one, two])
    repo.changes(one, known=known)
    undo = repo.restore(one, known=known)
    repo.restore(undo.before, known=known)
    assert not any(p.startswith(".git/") for p in repo.files(one) | repo.files(two))
    repo.prune([one])
    assert _tree_hash(workspace / ".git") == before
    assert _git(workspace, "log", "--format=%s") == "first\n"


def test_ignored_and_large_files_are_not_snapshotted_and_never_deleted(workspace: Path, tmp_path: Path) -> None:
    """Ignored and oversized files stay out of snapshots, and no restore deletes or overwrites them."""
    repo = ShadowRepo(workspace, tmp_path / "shadow.git", max_file_bytes=1000)
    (workspace / ".gitignore").write_text("*.log\nbuild/\n")
    (workspace / "data.csv").write_text("small\n")
    one = repo.snapshot()
    (workspace / "run.log").write_text("log\n")
    (workspace / "build").mkdir()
    (workspace / "build" / "out.bin").write_bytes(b"\0" * 10)
    (workspace / "huge.bin").write_bytes(b"x" * 5000)
    (workspace / "data.csv").write_text("y" * 5000)  # was snapshotted small, now too large
    two = repo.snapshot()
    assert repo.files(two) == {".gitignore"}
    unseen = _versions(workspace, "run.log", "huge.bin", "build/out.bin")
    result = repo.restore(one, known=repo.seen([one, two]) | unseen)
    assert result.preview.skip == ("data.csv",)
    assert (workspace / "data.csv").read_text() == "y" * 5000
    assert (workspace / "run.log").exists()
    assert (workspace / "build" / "out.bin").exists()
    assert (workspace / "huge.bin").stat().st_size == 5000


def test_a_file_ignored_after_it_was_snapshotted_leaves_later_snapshots(workspace: Path, repo: ShadowRepo) -> None:
    """A .gitignore line added later takes the files it covers out of the next snapshot."""
    (workspace / "cache.tmp").write_text("cache\n")
    assert "cache.tmp" in repo.files(repo.snapshot())
    (workspace / ".gitignore").write_text("*.tmp\n")
    assert repo.files(repo.snapshot()) == {".gitignore"}


def test_restore_returns_the_present_so_restoring_it_undoes_the_switch(workspace: Path, repo: ShadowRepo) -> None:
    """The snapshot a restore takes first brings back every file as it was, the person's files included."""
    _first_version(workspace)
    one = repo.snapshot()
    _second_version(workspace)
    two = repo.snapshot()
    (workspace / "unsaved.txt").write_text("written after the last snapshot\n")
    (workspace / "notes.md").write_text("edited after the last snapshot\n")
    present = _state(workspace)
    known = repo.seen([one, two])
    switched = repo.restore(one, known=known)
    assert _state(workspace) != present
    repo.restore(switched.before, known=known | repo.seen([one]))
    assert _state(workspace) == present


def test_the_preview_matches_what_the_restore_then_does(workspace: Path, repo: ShadowRepo) -> None:
    """changes() touches nothing and lists exactly the paths restore() rewrites, creates, deletes and keeps."""
    _first_version(workspace)
    one = repo.snapshot()
    _second_version(workspace)
    (workspace / "notes.md").unlink()
    two = repo.snapshot()
    (workspace / "mine.txt").write_text("mine\n")
    known = repo.seen([one, two])
    untouched = _state(workspace)
    preview = repo.changes(one, known=known)
    assert _state(workspace) == untouched
    assert preview.rewrite == tuple(sorted((ODD_NAME, "app-link", "crlf.txt", "ident.txt", "run.sh", "src/app.py")))
    assert preview.create == ("notes.md",)
    assert preview.delete == ("src/new module.py",)
    assert preview.keep == ("mine.txt",)
    result = repo.restore(one, known=known)
    assert result.preview == preview
    after = _state(workspace)
    changed = {p for p in set(after) | set(untouched) if after.get(p) != untouched.get(p)}
    assert changed == set(preview.changed)


def test_disk_use_stays_bounded(workspace: Path, repo: ShadowRepo) -> None:
    """200 snapshots of a file edited each time pack to a few copies; dropping them frees the space."""
    rng = random.Random(4)
    lines = [f"{rng.getrandbits(128):032x}\n" for _ in range(4000)]  # 132 KB that does not compress
    snapshots = []
    for step in range(200):
        lines[rng.randrange(len(lines))] = f"edit {step}\n"
        (workspace / "big.txt").write_text("".join(lines))
        snapshots.append(repo.snapshot())
    size = len("".join(lines))
    loose = repo.disk_bytes()
    assert loose > 50 * size
    packed = repo.prune(snapshots)
    assert packed < 3 * size
    assert repo.files(snapshots[0]) == {"big.txt"}
    pruned = repo.prune(snapshots[-1:])
    assert pruned < 1.5 * size
    with pytest.raises(CheckpointError, match="pruned"):
        repo.files(snapshots[0])
    repo.restore(snapshots[-1], known=set())
    assert (workspace / "big.txt").read_text() == "".join(lines)


def test_pruning_everything_keeps_the_present_usable(workspace: Path, repo: ShadowRepo) -> None:
    """After dropping every snapshot the next one still holds the files and restores them."""
    _first_version(workspace)
    repo.snapshot()
    repo.prune([])
    again = repo.snapshot("after prune")
    wanted = _state(workspace)
    (workspace / "src" / "app.py").write_text("broken\n")
    repo.restore(again, known=set())
    assert _state(workspace) == wanted


def test_the_same_files_give_the_same_snapshot(workspace: Path, repo: ShadowRepo) -> None:
    """Snapshotting an unchanged workspace twice gives one id, and another label another."""
    _first_version(workspace)
    first = repo.snapshot("turn")
    assert repo.snapshot("turn") == first
    assert ShadowRepo(workspace, repo.git_dir).snapshot("turn") == first
    assert repo.snapshot("other label") != first


def test_a_symlink_on_the_way_is_never_followed(workspace: Path, repo: ShadowRepo, tmp_path: Path) -> None:
    """A restore does not write through a folder the person replaced with a symlink to outside the workspace."""
    (workspace / "out").mkdir()
    (workspace / "out" / "file.txt").write_text("inside\n")
    one = repo.snapshot()
    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace / "out" / "file.txt").unlink()
    (workspace / "out").rmdir()
    os.symlink(outside, workspace / "out")
    result = repo.restore(one, known=repo.seen([one]))
    assert result.preview.skip == ("out/file.txt",)
    assert result.preview.keep == ("out",)
    assert list(outside.iterdir()) == []
    assert (workspace / "out").is_symlink()


def test_a_nested_repository_is_left_to_itself(workspace: Path, repo: ShadowRepo) -> None:
    """Snapshots skip nested git repositories (even one with no commit) and restores never touch them."""
    (workspace / "top.txt").write_text("top\n")
    (workspace / "vendor").mkdir()
    _git(workspace / "vendor", "init", "-q")
    (workspace / "vendor" / "lib.py").write_text("lib\n")
    one = repo.snapshot()
    assert repo.files(one) == {"top.txt"}
    (workspace / "vendor" / "lib.py").write_text("changed\n")
    repo.restore(one, known=_versions(workspace, "top.txt", "vendor/lib.py"))
    assert (workspace / "vendor" / "lib.py").read_text() == "changed\n"


def test_a_folder_the_person_still_uses_is_not_replaced(workspace: Path, repo: ShadowRepo) -> None:
    """When the target has a file where a folder now holds the person's files, the folder stays."""
    (workspace / "thing").write_text("a file\n")
    one = repo.snapshot()
    (workspace / "thing").unlink()
    (workspace / "thing").mkdir()
    (workspace / "thing" / "agent.txt").write_text("agent\n")
    two = repo.snapshot()
    (workspace / "thing" / "mine.txt").write_text("mine\n")
    result = repo.restore(one, known=repo.seen([one, two]))
    assert result.preview.skip == ("thing",)
    assert (workspace / "thing" / "mine.txt").read_text() == "mine\n"
    (workspace / "thing" / "mine.txt").unlink()
    repo.restore(one, known=repo.seen([one, two]))
    assert (workspace / "thing").is_dir()  # not the agent's folder: kept, and the file skipped
    repo.restore(one, known=repo.seen([one, two]), folders={"thing"})
    assert (workspace / "thing").read_text() == "a file\n"


def test_a_missing_workspace_is_a_clear_error(workspace: Path, repo: ShadowRepo) -> None:
    """Snapshotting a workspace that was removed says so."""
    workspace.rmdir()
    with pytest.raises(WorkspaceError, match="no longer there"):
        repo.snapshot()


def test_git_missing_is_a_clear_error(workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without git on PATH, checkpoints say git is needed."""
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ConfigError, match="git is needed for checkpoints"):
        ShadowRepo(workspace, tmp_path / "shadow.git")


def test_an_unknown_checkpoint_is_a_clear_error(workspace: Path, repo: ShadowRepo) -> None:
    """Restoring an id this store never made fails before touching a file."""
    (workspace / "a.txt").write_text("a\n")
    repo.snapshot()
    with pytest.raises(CheckpointError, match="not in"):
        repo.restore("0" * 40, known=set())
    with pytest.raises(CheckpointError, match="not a checkpoint id"):
        repo.restore("HEAD~1", known=set())
    assert (workspace / "a.txt").read_text() == "a\n"


def test_the_shadow_repository_is_private(workspace: Path, repo: ShadowRepo) -> None:
    """The snapshot store is readable by its owner only."""
    (workspace / "a.txt").write_text("a\n")
    repo.snapshot()
    assert stat.S_IMODE(repo.git_dir.stat().st_mode) == 0o700


def test_the_present_is_handed_over_before_any_file_changes(workspace: Path, repo: ShadowRepo) -> None:
    """on_before gets the undo snapshot while the workspace is still untouched, so a crash can be undone."""
    _first_version(workspace)
    one = repo.snapshot()
    _second_version(workspace)
    present = _state(workspace)
    handed: list[tuple[str, bool]] = []
    result = repo.restore(
        one, known=repo.seen([one]), on_before=lambda c: handed.append((c, _state(workspace) == present))
    )
    assert handed == [(result.before, True)]


def test_a_lock_left_by_a_killed_git_does_not_block_snapshots(workspace: Path, tmp_path: Path) -> None:
    """A shadow index.lock left behind by a crash is cleared by the next session's first snapshot."""
    (workspace / "a.txt").write_text("a\n")
    first = ShadowRepo(workspace, tmp_path / "shadow.git")
    first.snapshot()
    (first.git_dir / "index.lock").write_bytes(b"")
    (workspace / "a.txt").write_text("b\n")
    later = ShadowRepo(workspace, tmp_path / "shadow.git").snapshot()
    assert ShadowRepo(workspace, tmp_path / "shadow.git").files(later) == {"a.txt"}


def test_chimeras_own_state_inside_the_workspace_is_never_snapshotted(workspace: Path) -> None:
    """A store or CHIMERA_HOME kept inside the workspace stays out of snapshots and restores."""
    repo = ShadowRepo(workspace, workspace / ".state [1]" / "shadow.git")
    (workspace / "a.txt").write_text("a\n")
    one = repo.snapshot()
    (workspace / "a.txt").write_text("b\n")
    two = repo.snapshot()
    assert repo.files(one) == repo.files(two) == {"a.txt"}
    before = _tree_hash(repo.git_dir)
    repo.restore(one, known=repo.seen([one, two]))
    assert (workspace / "a.txt").read_text() == "a\n"
    assert _tree_hash(repo.git_dir) != before  # the store did grow (the undo snapshot)...
    assert repo.files(repo.snapshot()) == {"a.txt"}  # ...and is still not part of the workspace's files


def test_a_diff_shows_lines_of_text_holding_a_nul_and_names_a_real_binary_file(
    workspace: Path, repo: ShadowRepo
) -> None:
    """Text with a NUL in a line (git calls it binary) shows its added line and counts it, in its own section;
    a PNG (not UTF-8) and a new file holding a NUL keep git's one line only when they are not text."""
    (workspace / "run.sh").write_bytes(b"echo hi\n")
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    (workspace / "z.txt").write_text("z\n")
    one = repo.snapshot()
    (workspace / "run.sh").write_bytes(b"echo hi\necho ok\x00; rm -rf x\n")
    (workspace / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\xff")
    (workspace / "new.sh").write_bytes(b"\x00start\n")
    (workspace / "z.txt").write_text("zz\n")
    two = repo.snapshot()
    patch = repo.patch(one, two).decode(errors="replace")
    assert "Binary files a/image.png and b/image.png differ\n" in patch
    assert "+echo ok\x00; rm -rf x\n" in patch
    assert "+\x00start\n" in patch
    assert "-z\n+zz\n" in patch
    assert [line for line in patch.splitlines() if line.startswith("diff --git")] == [
        f"diff --git a/{name} b/{name}" for name in ("image.png", "new.sh", "run.sh", "z.txt")
    ]
    assert repo.numstat(one, two) == [("image.png", 0, 0), ("new.sh", 1, 0), ("run.sh", 1, 0), ("z.txt", 1, 1)]
