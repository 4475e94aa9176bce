"""A confined command cannot leave behind what git would run outside the sandbox: hooks, config keys that name
programs, a submodule's hooks, a hooks folder core.hooksPath names, a .git swapped for another. What it
changed there is put back and the result says the sandbox refused it; git's own work (commits, a remote, the
author) goes on as without the sandbox."""

from __future__ import annotations

import concurrent.futures
import os
import subprocess
from pathlib import Path

import pytest

from chimera.core.sandbox.policy import Confinement
from tests.git_helpers import git
from tests.sandbox_helpers import confined, needs_landlock, run

pytestmark = needs_landlock

HOOK = "printf '#!/bin/sh\\ntouch {mark}\\n' > {path} && chmod +x {path}"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A workspace that is a git repository with one commit and an author."""
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q")
    git(ws, "config", "user.name", "Someone")
    git(ws, "config", "user.email", "someone@example.com")
    (ws / "f.txt").write_text("one\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "one")
    return ws


def _commit_outside(ws: Path) -> None:
    """The person's own next commit, outside the sandbox, as they would make it."""
    (ws / "f.txt").write_text("two\n")
    subprocess.run(["git", "-C", str(ws), "commit", "-qam", "two"], check=True, capture_output=True)


def _refused(result_data: dict[str, object], sandbox: Confinement) -> str:
    """What the result says the sandbox refused (it must say it refused)."""
    assert result_data["sandbox"] == "refused"
    return str(result_data["sandbox_refused"])


def test_a_planted_hook_is_put_back_and_never_runs(repo: Path, tmp_path: Path) -> None:
    """A hook written by a confined command is gone when the call ends, the result says so, and the person's
    next commit runs nothing."""
    mark = tmp_path / "hooked"
    sandbox = confined(repo)
    result = run(HOOK.format(mark=mark, path=".git/hooks/pre-commit"), repo, sandbox)
    said = _refused(result.data, sandbox)
    assert result.is_error  # the command exited 0, but what it did does not all stand
    assert ".git/hooks/pre-commit" in said
    assert "put back" in said
    assert "[the sandbox refused changing .git/hooks/pre-commit" in result.output
    assert not (repo / ".git/hooks/pre-commit").exists()
    _commit_outside(repo)
    assert not mark.exists()


@pytest.mark.parametrize(
    ("command", "key"),
    [
        ("git config core.fsmonitor 'touch {mark}'", "core.fsmonitor"),
        ("git config core.hooksPath {hooks}", "core.hookspath"),
        ("git config include.path {included}", "include.path"),
        ("printf '[alias]\\n\\tci = !touch {mark}\\n' >> .git/config", "alias.ci"),
    ],
    ids=["fsmonitor", "hooksPath", "include", "appended"],
)
def test_config_that_names_a_program_is_put_back(repo: Path, tmp_path: Path, command: str, key: str) -> None:
    """A config key that makes git start a program, however it is written, is put back, the result naming it."""
    mark, hooks = tmp_path / "hooked", tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "pre-commit").write_text(f"#!/bin/sh\ntouch {mark}\n")
    (hooks / "pre-commit").chmod(0o755)
    included = tmp_path / "included"
    included.write_text(f"[core]\n\tfsmonitor = touch {mark}\n")
    config = (repo / ".git/config").read_bytes()
    sandbox = confined(repo)
    result = run(command.format(mark=mark, hooks=hooks, included=included), repo, sandbox)
    assert f".git/config ({key})" in _refused(result.data, sandbox)
    assert (repo / ".git/config").read_bytes() == config
    _commit_outside(repo)
    subprocess.run(["git", "-C", str(repo), "status"], check=True, capture_output=True)
    assert not mark.exists()


def test_git_work_that_runs_nothing_goes_on(repo: Path) -> None:
    """A commit, a remote, an author and a branch's upstream, made by a confined command, stay, unrefused."""
    sandbox = confined(repo)
    command = (
        "echo more >> f.txt && git commit -qam more"
        " && git remote add origin https://example.com/r.git && git config user.email agent@example.com"
        " && git config branch.master.remote origin && git checkout -qb topic && git log --oneline -1"
    )
    result = run(command, repo, sandbox)
    assert not result.is_error, result.output
    assert result.data["sandbox"] == "confined"
    assert "more" in result.output
    listed = subprocess.run(["git", "-C", str(repo), "config", "--list", "--local"], capture_output=True, text=True)
    assert "remote.origin.url=https://example.com/r.git" in listed.stdout
    assert "user.email=agent@example.com" in listed.stdout


def test_hooks_replaced_by_a_link_come_back_as_they_were(repo: Path, tmp_path: Path) -> None:
    """The hooks folder swapped for a link to a folder of the command's own is a folder again, as it was."""
    before = sorted(path.name for path in (repo / ".git/hooks").iterdir())
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    sandbox = confined(repo)
    result = run(f"rm -rf .git/hooks && ln -s {theirs} .git/hooks", repo, sandbox)
    said = _refused(result.data, sandbox)
    assert said.startswith("changing .git/hooks:")
    assert not (repo / ".git/hooks").is_symlink()
    assert sorted(path.name for path in (repo / ".git/hooks").iterdir()) == before


def test_a_swapped_git_directory_is_set_aside_and_the_real_one_returns(repo: Path, tmp_path: Path) -> None:
    """`.git` moved away and a new one made with a hook: the real one is back, the new one set aside, and the
    person's history is as it was."""
    mark = tmp_path / "hooked"
    head = git(repo, "rev-parse", "HEAD")
    sandbox = confined(repo)
    command = "mv .git old && git init -q . && " + HOOK.format(mark=mark, path=".git/hooks/pre-commit")
    result = run(command, repo, sandbox)
    assert _refused(result.data, sandbox).startswith("changing .git:")
    assert git(repo, "rev-parse", "HEAD") == head
    assert not (repo / "old").exists()
    assert (repo / ".git.refused-by-sandbox/hooks/pre-commit").exists()  # kept, never run
    _commit_outside(repo)
    assert not mark.exists()


def test_a_git_directory_moved_out_of_reach_is_said_so_not_said_put_back(repo: Path) -> None:
    """`.git` moved deeper than the workspace's top cannot be found to put back: the refusal says so, and never
    claims it was put back."""
    sandbox = confined(repo)
    result = run("mkdir -p deep/er && mv .git deep/er/", repo, sandbox)
    said = _refused(result.data, sandbox)
    assert said.startswith("changing .git: it was moved away or deleted")
    assert "put back as before" not in said
    assert (repo / "deep/er/.git/HEAD").exists()  # the person's history is still there, where it was moved


def test_a_hooks_folder_in_the_workspace_is_guarded_too(repo: Path, tmp_path: Path) -> None:
    """With core.hooksPath naming a folder of the workspace (as husky sets it), a hook written there is put back."""
    (repo / ".husky").mkdir()
    git(repo, "config", "core.hooksPath", ".husky")
    mark = tmp_path / "hooked"
    sandbox = confined(repo)
    result = run(HOOK.format(mark=mark, path=".husky/pre-commit"), repo, sandbox)
    assert ".husky/pre-commit" in _refused(result.data, sandbox)
    _commit_outside(repo)
    assert not mark.exists()


def test_a_config_file_of_the_workspace_the_config_includes_is_guarded(repo: Path, tmp_path: Path) -> None:
    """A project's config kept in the workspace and taken in by include.path is config too: a program named there
    by a confined command is put back."""
    (repo / "project.gitconfig").write_text("[user]\n\tname = Someone\n")
    git(repo, "config", "include.path", "../project.gitconfig")
    mark = tmp_path / "hooked"
    sandbox = confined(repo)
    result = run(f"printf '[core]\\n\\tfsmonitor = touch {mark}\\n' >> project.gitconfig", repo, sandbox)
    assert "project.gitconfig" in _refused(result.data, sandbox)
    assert (repo / "project.gitconfig").read_text() == "[user]\n\tname = Someone\n"
    _commit_outside(repo)
    assert not mark.exists()


def test_a_submodules_hooks_are_guarded(repo: Path, tmp_path: Path) -> None:
    """A submodule's git directory under .git/modules has its hooks guarded as the repository's own."""
    lib = tmp_path / "lib"
    lib.mkdir()
    git(lib, "init", "-q")
    git(lib, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "lib")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(lib), "lib")
    mark = tmp_path / "hooked"
    sandbox = confined(repo)
    result = run(HOOK.format(mark=mark, path=".git/modules/lib/hooks/post-checkout"), repo, sandbox)
    assert ".git/modules/lib/hooks/post-checkout" in _refused(result.data, sandbox)
    assert not (repo / ".git/modules/lib/hooks/post-checkout").exists()


def test_a_linked_worktrees_repository_hooks_are_guarded(tmp_path: Path) -> None:
    """In a linked worktree the repository's common git directory is writable for commits; its hooks are not."""
    main = tmp_path / "main"
    main.mkdir()
    git(main, "init", "-q")
    git(main, "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "root")
    linked = tmp_path / "linked"
    git(main, "worktree", "add", "-q", str(linked))
    mark = tmp_path / "hooked"
    sandbox = confined(linked)
    result = run(HOOK.format(mark=mark, path=f"{main}/.git/hooks/pre-commit"), linked, sandbox)
    assert f"{main}/.git/hooks/pre-commit" in _refused(result.data, sandbox)
    assert not (main / ".git/hooks/pre-commit").exists()


def test_without_the_sandbox_nothing_is_guarded(repo: Path, tmp_path: Path) -> None:
    """Unconfined (the sandbox off, or a command the person let run outside it) a hook is written as asked."""
    result = run(HOOK.format(mark=tmp_path / "hooked", path=".git/hooks/pre-commit"), repo, None)
    assert not result.is_error
    assert (repo / ".git/hooks/pre-commit").exists()


def test_a_fifo_for_a_config_never_blocks_the_next_command(tmp_path: Path) -> None:
    """A repository made by a command with a FIFO for its config: the next command still runs and says so."""
    ws = tmp_path / "ws"
    ws.mkdir()
    sandbox = confined(ws)
    run("git init -q && rm .git/config && mkfifo .git/config", ws, sandbox)
    pool = concurrent.futures.ThreadPoolExecutor(1)
    later = pool.submit(run, "echo ran", ws, sandbox)
    try:
        result = later.result(timeout=20)
    except concurrent.futures.TimeoutError:
        os.close(os.open(ws / ".git/config", os.O_WRONLY | os.O_NONBLOCK))  # the reader gets its end, unstuck
        pytest.fail("the next command waited for ever on the FIFO")
    finally:
        pool.shutdown()
    assert "ran" in result.output


def test_putting_back_never_goes_through_a_link_out_of_the_workspace(repo: Path, tmp_path: Path) -> None:
    """A folder on the way to a guarded hooks folder swapped for a link outside: what is there stays untouched,
    and the link is set aside so git cannot run what it points at."""
    (repo / "tools/hooks").mkdir(parents=True)
    git(repo, "config", "core.hooksPath", "tools/hooks")
    precious = tmp_path / "precious"
    (precious / "hooks").mkdir(parents=True)
    (precious / "hooks/notes.txt").write_text("mine\n")
    sandbox = confined(repo)
    result = run(f"rm -rf tools && ln -s {precious} tools", repo, sandbox)
    said = _refused(result.data, sandbox)
    assert "tools" in said
    assert (precious / "hooks/notes.txt").read_text() == "mine\n"
    assert sorted(path.name for path in (precious / "hooks").iterdir()) == ["notes.txt"]
    assert not (repo / "tools").exists()


def test_a_guarded_folder_removed_with_its_worktree_is_no_error(repo: Path) -> None:
    """`git worktree remove` of a worktree with its own config.worktree: the call ends as the command did."""
    git(repo, "config", "extensions.worktreeConfig", "true")
    git(repo, "worktree", "add", "-q", str(repo / "other"))
    (repo / ".git/worktrees/other/config.worktree").write_text("[user]\n\tname = Other\n")
    result = run("git worktree remove --force other && echo removed", repo, confined(repo))
    assert not result.is_error, result.output
    assert "removed" in result.output
    assert not (repo / ".git/worktrees/other").exists()


def test_a_file_moved_into_the_hooks_is_set_aside_never_deleted(repo: Path) -> None:
    """The person's folder moved into .git/hooks by a command: refused, and kept beside the hooks put back."""
    (repo / "src").mkdir()
    (repo / "src/work.py").write_text("precious = True\n")
    sandbox = confined(repo)
    result = run("mv src .git/hooks/", repo, sandbox)
    assert ".git/hooks" in _refused(result.data, sandbox)
    assert not (repo / ".git/hooks/src").exists()
    assert (repo / ".git/hooks.refused-by-sandbox/src/work.py").read_text() == "precious = True\n"


def test_a_file_moved_over_a_hook_of_yours_is_kept_beside_it(repo: Path) -> None:
    """`mv notes.txt .git/hooks/pre-commit` over the person's own hook: their hook is back, and the moved file is
    not lost: it is kept beside, in the hooks folder the command left (set aside, never deleted)."""
    hook = repo / ".git/hooks/pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    (repo / "notes.txt").write_text("my notes\n")
    sandbox = confined(repo)
    result = run("mv notes.txt .git/hooks/pre-commit", repo, sandbox)
    assert "NAME.refused-by-sandbox" in _refused(result.data, sandbox)
    assert hook.read_text() == "#!/bin/sh\nexit 0\n"
    assert (repo / ".git/hooks.refused-by-sandbox/pre-commit").read_text() == "my notes\n"


def test_a_git_directory_that_cannot_be_put_back_is_said_never_a_traceback(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should putting back fail (a folder made unreadable, for a person who is not root), the call says what could
    not be put back and where to look; it never fails with a Python error."""
    from chimera.core.sandbox.git_guard import GitGuard

    def refused(self: GitGuard) -> list[str]:
        raise PermissionError(13, "Permission denied", str(repo / ".git/hooks"))

    monkeypatch.setattr(GitGuard, "restore", refused)
    sandbox = confined(repo)
    result = run("true", repo, sandbox)
    said = _refused(result.data, sandbox)
    assert said.startswith("changing the git directory, and it could not be put back as it was:")
    assert f"{repo}/.git/hooks (Permission denied)" in said
    assert "Traceback" not in result.output
