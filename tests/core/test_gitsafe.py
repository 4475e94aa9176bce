"""Git that Chimera runs itself never starts a program the workspace (or a config) names, and never gets the key.

Each planted program appends to a marker file. Every case first proves its plant
is live (plain git runs the program), then that the same git command through
``run_git``, the context snapshot or the checkpoints runs nothing.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from chimera.core.gitsafe import git_executable, run_git
from chimera.core.loops.workspace_facts import git_snapshot
from chimera.core.sessions.checkpoints import ShadowRepo

KEY = "sk-ant-gitsafe-0123456789-never-in-git"


@dataclass
class Plant:
    """A repository with a program planted in it, and the marker that program leaves."""

    repo: Path
    program: Path
    marker: Path
    home: Path

    def ran(self) -> list[str]:
        return self.marker.read_text().splitlines() if self.marker.exists() else []


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """HOME is an empty folder (the global config); no system config; no repository above tmp_path."""
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)
    return folder


def _new_plant(folder: Path, home: Path) -> Plant:
    """A repository with one commit and a changed file, and a program that leaves a marker, under ``folder``."""
    folder.mkdir()
    marker = folder / "marker"
    program = folder / "planted.sh"
    program.write_text(f'#!/bin/sh\necho "$0 $*" >> {marker}\nexit 1\n')
    program.chmod(0o755)
    repo = folder / "ws"
    repo.mkdir()
    _plain(repo, "init", "-q", "-b", "main")
    _plain(repo, "config", "user.name", "person")
    _plain(repo, "config", "user.email", "person@example.com")
    (repo / "a.txt").write_text("hello\n")
    _plain(repo, "add", "a.txt")
    _plain(repo, "commit", "-qm", "first commit")
    (repo / "a.txt").write_text("hello again\n")
    return Plant(repo, program, marker, home)


@pytest.fixture
def plant(tmp_path: Path, home: Path) -> Plant:
    """A fresh repository to plant a program in."""
    return _new_plant(tmp_path / "safe", home)


@pytest.fixture
def live(tmp_path: Path, home: Path) -> Plant:
    """A second repository, for proving with plain git that a plant is live (plain git changes state)."""
    return _new_plant(tmp_path / "live", home)


def _plain(repo: Path, *args: str, input: str = "") -> subprocess.CompletedProcess[str]:
    """git as a person runs it: the full environment, a terminal type, prompts off."""
    env = {**os.environ, "TERM": "xterm", "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(["git", *args], cwd=repo, env=env, input=input, capture_output=True, text=True, timeout=20)


def _config(repo: Path, *pairs: str) -> None:
    for pair in pairs:
        key, _, value = pair.partition("=")
        _plain(repo, "config", "--add", key, value)


def _attributes(repo: Path, line: str) -> None:
    (repo / ".gitattributes").write_text(line + "\n")


def _stat_dirty(repo: Path) -> None:
    """a.txt back to its committed bytes with a new mtime: git must re-read it (and clean it) to compare."""
    (repo / "a.txt").write_text("hello\n")
    os.utime(repo / "a.txt", (1_000_000_000, 1_000_000_000))


def _signed_head(repo: Path) -> None:
    """HEAD becomes a commit carrying a (fake) signature, which verifying would hand to the gpg program."""
    tree = _plain(repo, "write-tree").stdout.strip()
    parent = _plain(repo, "rev-parse", "HEAD").stdout.strip()
    body = (
        f"tree {tree}\nparent {parent}\nauthor a <a@b> 946684800 +0000\ncommitter a <a@b> 946684800 +0000\n"
        "gpgsig -----BEGIN PGP SIGNATURE-----\n \n AAAA\n -----END PGP SIGNATURE-----\n\nsigned commit\n"
    )
    commit = _plain(repo, "hash-object", "-t", "commit", "-w", "--stdin", input=body).stdout.strip()
    _plain(repo, "update-ref", "HEAD", commit)


def _partial_clone(repo: Path, url: str) -> None:
    """The repository claims to be a partial clone of ``url`` and misses a commit, so reading history fetches."""
    (repo / "a.txt").write_text("second\n")
    _plain(repo, "commit", "-qam", "second commit")
    parent = _plain(repo, "rev-parse", "HEAD~1").stdout.strip()
    (repo / ".git" / "objects" / parent[:2] / parent[2:]).unlink()
    _config(
        repo,
        "core.repositoryformatversion=1",
        "extensions.partialClone=origin",
        f"remote.origin.url={url}",
        "remote.origin.promisor=true",
    )


def _merge_setup(p: Plant) -> None:
    _attributes(p.repo, "a.txt merge=planted")
    _plain(p.repo, "add", ".gitattributes")
    _plain(p.repo, "commit", "-qm", "attributes")
    _plain(p.repo, "checkout", "-qb", "other")
    (p.repo / "a.txt").write_text("theirs\n")
    _plain(p.repo, "commit", "-qam", "theirs")
    _plain(p.repo, "checkout", "-q", "main")
    (p.repo / "a.txt").write_text("ours\n")
    _plain(p.repo, "commit", "-qam", "ours")
    _config(p.repo, f"merge.planted.driver={p.program} %O %A %B")


CREDENTIAL_QUERY = "protocol=https\nhost=example.invalid\n\n"


@dataclass(frozen=True)
class Case:
    """A program planted one way, and a git command that would run it."""

    setup: Callable[[Plant], object]
    command: tuple[str, ...]
    input: str = ""
    succeeds: bool = False  # the command itself still works once the program is neutralised


CASES: dict[str, Case] = {
    "core.fsmonitor": Case(
        lambda p: _config(p.repo, f"core.fsmonitor={p.program}"), ("status", "--short"), succeeds=True
    ),
    "a hook in .git/hooks": Case(
        lambda p: (p.repo / ".git/hooks/post-index-change").symlink_to(p.program), ("add", "a.txt")
    ),
    "core.hooksPath to a workspace folder": Case(
        lambda p: (
            (p.repo / "hooks").mkdir(),
            (p.repo / "hooks/pre-commit").symlink_to(p.program),
            _config(p.repo, f"core.hooksPath={p.repo / 'hooks'}"),
        ),
        ("commit", "-qam", "x"),
    ),
    "a clean filter (status re-reads a stat-dirty file)": Case(
        lambda p: (
            _attributes(p.repo, "*.txt filter=planted"),
            _config(p.repo, f"filter.planted.clean={p.program}"),
            _stat_dirty(p.repo),
        ),
        ("status", "--short"),
        succeeds=True,
    ),
    "a required clean filter": Case(
        lambda p: (
            _attributes(p.repo, "*.txt filter=planted"),
            _config(p.repo, f"filter.planted.clean={p.program}", "filter.planted.required=true"),
            _stat_dirty(p.repo),
        ),
        ("status", "--short"),
        succeeds=True,
    ),
    "a filter process": Case(
        lambda p: (_attributes(p.repo, "*.txt filter=planted"), _config(p.repo, f"filter.planted.process={p.program}")),
        ("add", "a.txt"),
    ),
    "a smudge filter": Case(
        lambda p: (_attributes(p.repo, "*.txt filter=planted"), _config(p.repo, f"filter.planted.smudge={p.program}")),
        ("checkout", "--", "a.txt"),
    ),
    "a filter in a file the config includes": Case(
        lambda p: (
            _attributes(p.repo, "*.txt filter=planted"),
            (p.repo / "extra.conf").write_text(f'[filter "planted"]\n\tclean = {p.program}\n'),
            _config(p.repo, f"include.path={p.repo / 'extra.conf'}"),
            _stat_dirty(p.repo),
        ),
        ("status", "--short"),
        succeeds=True,
    ),
    "a filter in a conditional include": Case(
        lambda p: (
            (p.repo / "extra.conf").write_text(f'[filter "Planted.X"]\n\tclean = {p.program}\n'),
            _config(p.repo, f"includeIf.gitdir:{p.repo}/.git.path={p.repo / 'extra.conf'}"),
            _attributes(p.repo, "*.txt filter=Planted.X"),
            _stat_dirty(p.repo),
        ),
        ("status", "--short"),
        succeeds=True,
    ),
    "a filter in the global config, named by .gitattributes": Case(
        lambda p: (
            _attributes(p.repo, "*.txt filter=planted"),
            (p.home / ".gitconfig").write_text(f'[filter "planted"]\n\tclean = {p.program}\n'),
            _stat_dirty(p.repo),
        ),
        ("status", "--short"),
        succeeds=True,
    ),
    "diff.external": Case(lambda p: _config(p.repo, f"diff.external={p.program}"), ("diff",)),
    "a diff driver's command": Case(
        lambda p: (_attributes(p.repo, "*.txt diff=planted"), _config(p.repo, f"diff.planted.command={p.program}")),
        ("diff",),
    ),
    "a diff driver's textconv": Case(
        lambda p: (_attributes(p.repo, "*.txt diff=planted"), _config(p.repo, f"diff.planted.textconv={p.program}")),
        ("diff",),
    ),
    "a merge driver": Case(_merge_setup, ("merge", "-q", "--no-edit", "other")),
    "core.editor": Case(
        lambda p: (_config(p.repo, f"core.editor={p.program}"), _plain(p.repo, "add", "a.txt")), ("commit",)
    ),
    "gpg.program, with log.showSignature": Case(
        lambda p: (_signed_head(p.repo), _config(p.repo, "log.showSignature=true", f"gpg.program={p.program}")),
        ("log", "--oneline", "-n", "1"),
        succeeds=True,
    ),
    "gpg.openpgp.program": Case(
        lambda p: (_signed_head(p.repo), _config(p.repo, "log.showSignature=true", f"gpg.openpgp.program={p.program}")),
        ("log", "--oneline", "-n", "1"),
    ),
    "credential.helper": Case(
        lambda p: _config(p.repo, f"credential.helper={p.program}"), ("credential", "fill"), CREDENTIAL_QUERY
    ),
    "a URL's credential helper": Case(
        lambda p: _config(p.repo, f"credential.https://example.invalid.helper={p.program}"),
        ("credential", "fill"),
        CREDENTIAL_QUERY,
    ),
    "core.askPass": Case(
        lambda p: _config(p.repo, f"core.askPass={p.program}"), ("credential", "fill"), CREDENTIAL_QUERY
    ),
    "core.sshCommand": Case(
        lambda p: _config(p.repo, f"core.sshCommand={p.program}"), ("ls-remote", "ssh://example.invalid/x")
    ),
    "core.gitProxy": Case(
        lambda p: _config(p.repo, f"core.gitProxy={p.program}"), ("ls-remote", "git://example.invalid/x")
    ),
    "an ext:: remote that protocol.ext.allow lets run": Case(
        lambda p: _config(p.repo, f"remote.origin.url=ext::{p.program}", "protocol.ext.allow=always"),
        ("ls-remote", "origin"),
    ),
    "a local remote's uploadpack": Case(
        lambda p: _config(p.repo, f"remote.origin.url={p.repo}", f"remote.origin.uploadpack={p.program}"),
        ("ls-remote", "origin"),
    ),
    "a lazy fetch in a partial clone": Case(
        lambda p: (_partial_clone(p.repo, f"ext::{p.program}"), _config(p.repo, "protocol.ext.allow=always")),
        ("log", "--oneline"),
    ),
    "an archive format's command": Case(
        lambda p: _config(p.repo, f"tar.planted.command={p.program}"), ("archive", "--format=planted", "HEAD")
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_a_planted_program_never_runs_through_run_git(live: Plant, plant: Plant, name: str) -> None:
    """Plain git runs the planted program for this command; the same command through run_git runs nothing."""
    case = CASES[name]
    case.setup(live)
    _plain(live.repo, *case.command, input=case.input)
    assert live.ran(), f"the plant ({name}) is not live: plain git did not run it"
    case.setup(plant)
    git = git_executable()
    assert git is not None
    proc = run_git(git, case.command, cwd=plant.repo, input=case.input.encode(), timeout=20)
    assert plant.ran() == []
    if case.succeeds:
        assert proc.returncode == 0, proc.stderr


def test_a_config_key_with_an_equals_sign_in_its_name_is_still_neutralised(plant: Plant) -> None:
    """A filter whose name holds '=' and '.' (which `-c name=value` would split wrongly) still never runs."""
    _attributes(plant.repo, "*.txt filter=a=b.c")
    (plant.repo / ".git" / "config").write_text(
        (plant.repo / ".git" / "config").read_text() + f'[filter "a=b.c"]\n\tclean = {plant.program}\n'
    )
    _stat_dirty(plant.repo)
    _plain(plant.repo, "--no-optional-locks", "status", "--short")
    assert plant.ran()
    plant.marker.unlink()
    snapshot = git_snapshot(plant.repo)
    assert plant.ran() == []
    assert snapshot is not None
    assert "first commit" in snapshot


SNAPSHOT_PLANTS = [
    "core.fsmonitor",
    "a clean filter (status re-reads a stat-dirty file)",
    "a required clean filter",
    "a filter in a file the config includes",
    "a filter in a conditional include",
    "a filter in the global config, named by .gitattributes",
    "gpg.program, with log.showSignature",
    "a lazy fetch in a partial clone",
]


@pytest.mark.parametrize("name", SNAPSHOT_PLANTS)
def test_the_context_snapshot_runs_nothing_planted_and_still_reports_the_repository(plant: Plant, name: str) -> None:
    """The model's git snapshot of a workspace with a planted program: the program never runs, the snapshot is right."""
    CASES[name].setup(plant)
    snapshot = git_snapshot(plant.repo)
    assert plant.ran() == []
    assert snapshot is not None
    assert "Git branch: main" in snapshot
    if (plant.repo / ".gitattributes").exists():
        assert "?? .gitattributes" in snapshot  # git status itself still worked
    if name == "a lazy fetch in a partial clone":
        assert "Status:\n(clean)" in snapshot  # git log fails on the missing commit: nothing was fetched for it
    elif name == "gpg.program, with log.showSignature":
        assert "signed commit" in snapshot
    else:
        assert "first commit" in snapshot


def test_the_context_snapshot_does_not_look_inside_a_submodule(plant: Plant, tmp_path: Path) -> None:
    """A submodule whose own config names a filter: the snapshot lists its new commit and runs nothing."""
    source = tmp_path / "source"
    source.mkdir()
    _plain(source, "init", "-q")
    _plain(source, "config", "user.name", "person")
    _plain(source, "config", "user.email", "person@example.com")
    (source / "s.txt").write_text("s\n")
    _attributes(source, "*.txt filter=planted")
    _plain(source, "add", ".")
    _plain(source, "commit", "-qm", "sub")
    _plain(plant.repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(source), "sub")
    _plain(plant.repo, "commit", "-qm", "add the submodule")
    sub = plant.repo / "sub"
    _config(sub, "user.name=p", "user.email=p@example.com")
    _plain(sub, "commit", "-q", "--allow-empty", "-m", "moved")
    _config(sub, f"filter.planted.clean={plant.program}")
    os.utime(sub / "s.txt", (1_000_000_000, 1_000_000_000))
    _plain(plant.repo, "--no-optional-locks", "status", "--short")
    assert plant.ran(), "the plant is not live: plain git status did not run the submodule's filter"
    plant.marker.unlink()
    snapshot = git_snapshot(plant.repo)
    assert plant.ran() == []
    assert snapshot is not None
    assert " M sub" in snapshot


CHECKPOINT_PLANTS: dict[str, Callable[[Plant], object]] = {
    "core.fsmonitor": lambda p: _global(p, f"[core]\n\tfsmonitor = {p.program}\n"),
    "core.hooksPath to a workspace folder": lambda p: (
        (p.repo / "hooks").mkdir(),
        (p.repo / "hooks/post-index-change").symlink_to(p.program),
        _global(p, f"[core]\n\thooksPath = {p.repo / 'hooks'}\n"),
    ),
    "required clean and smudge filters": lambda p: (
        _attributes(p.repo, "*.txt filter=planted"),
        _global(p, f'[filter "planted"]\n\tclean = {p.program}\n\tsmudge = {p.program}\n\trequired = true\n'),
    ),
    "a filter process": lambda p: (
        _attributes(p.repo, "*.txt filter=planted"),
        _global(p, f'[filter "planted"]\n\tprocess = {p.program}\n'),
    ),
    "a filter in a workspace file the global config includes": lambda p: (
        _attributes(p.repo, "*.txt filter=planted"),
        (p.repo / "extra.conf").write_text(f'[filter "planted"]\n\tclean = {p.program}\n'),
        _global(p, f"[include]\n\tpath = {p.repo / 'extra.conf'}\n"),
    ),
    "diff drivers": lambda p: (
        _attributes(p.repo, "*.txt diff=planted"),
        _global(p, f'[diff]\n\texternal = {p.program}\n[diff "planted"]\n\ttextconv = {p.program}\n'),
    ),
}


def _global(p: Plant, text: str) -> None:
    with open(p.home / ".gitconfig", "a") as config:
        config.write(text)


@pytest.mark.parametrize("name", CHECKPOINT_PLANTS)
def test_checkpoints_run_nothing_planted_and_keep_the_bytes(plant: Plant, tmp_path: Path, name: str) -> None:
    """Snapshots and a restore with a program planted in the config: it never runs; files come back byte for byte."""
    CHECKPOINT_PLANTS[name](plant)
    shadow = ShadowRepo(plant.repo, tmp_path / "shadow.git")
    first = shadow.snapshot("first")
    (plant.repo / "a.txt").write_text("changed by the agent\n")
    (plant.repo / "b.txt").write_text("new\n")
    second = shadow.snapshot("second")
    shadow.restore(first, known=shadow.seen([first, second]))
    assert plant.ran() == []
    assert (plant.repo / "a.txt").read_bytes() == b"hello again\n"
    assert not (plant.repo / "b.txt").exists()


@pytest.fixture
def recording_git(plant: Plant, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `git` first on the PATH that appends its environment to a log, then runs the real git."""
    real = git_executable()
    assert real is not None
    folder = tmp_path / "bin"
    folder.mkdir()
    log = tmp_path / "git-environments"
    wrapper = folder / "git"
    wrapper.write_text(f'#!/bin/sh\nenv >> {log}\necho ---- >> {log}\nexec {real} "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", KEY + "-token")
    monkeypatch.setenv("SSH_AUTH_SOCK", str(tmp_path / "agent.sock"))
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", f"'core.fsmonitor'='{tmp_path / 'nothing'}'")
    return log


def test_git_for_the_snapshot_and_the_checkpoints_never_gets_the_key(
    plant: Plant, tmp_path: Path, recording_git: Path
) -> None:
    """With the key, an SSH agent and GIT_* in Chimera's environment, no git it runs sees any of them."""
    assert git_snapshot(plant.repo) is not None
    shadow = ShadowRepo(plant.repo, tmp_path / "shadow.git")
    first = shadow.snapshot()
    (plant.repo / "a.txt").write_text("changed\n")
    shadow.restore(first, known=shadow.seen([first]))
    seen = recording_git.read_text()
    assert seen.count("----") >= 10  # both the snapshot and the checkpoints ran through the recording git
    assert KEY not in seen
    assert "SSH_AUTH_SOCK" not in seen
    assert "GIT_CONFIG_PARAMETERS" not in seen


def test_git_is_never_looked_up_in_a_relative_path_folder(plant: Plant, monkeypatch: pytest.MonkeyPatch) -> None:
    """With '.' and '' on the PATH, a `git` in the workspace is never the one Chimera runs."""
    fake = plant.repo / "git"
    fake.write_text(f'#!/bin/sh\necho "$0" >> {plant.marker}\nexit 1\n')
    fake.chmod(0o755)
    monkeypatch.chdir(plant.repo)
    monkeypatch.setenv("PATH", f".{os.pathsep}{os.pathsep}{os.environ['PATH']}")
    snapshot = git_snapshot(plant.repo)
    assert plant.ran() == []
    assert snapshot is not None
    assert "first commit" in snapshot
