"""Provides what the model should know about the workspace: a git snapshot and project instructions.

The snapshot (branch, default branch, ``git status --short`` capped near 2,000
characters, the last five commits) is read once per session and is skipped
quietly outside a repository or without git. A git that does not answer within
``SNAPSHOT_TIMEOUT`` seconds (``CHIMERA_GIT_TIMEOUT`` overrides it) is killed
and the snapshot is unavailable: :class:`SnapshotUnavailable` says why, in one
line, and no further git call is made for it. Git runs through
:func:`~chimera.core.gitsafe.run_git`, so nothing the workspace's config names
(fsmonitor, filters, hooks, a lazy fetch...) can run; submodules are compared by
commit only, since looking inside one would run git with its own config.
Project instructions come from ``AGENTS.md`` and ``CLAUDE.md`` at the workspace root,
each read only as far as it is shown (``INSTRUCTIONS_CAP`` characters), and only
when it is a regular file in the workspace: a FIFO is never waited on, and a
link that leads out of the workspace (a cloned repository's ``AGENTS.md`` made a
link to someone's key) is not followed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

from chimera.core.errors import ChimeraError
from chimera.core.gitsafe import GitStop, git_executable, git_timeout, run_git
from chimera.core.tools.files import open_regular

__all__ = ["INSTRUCTION_FILES", "SNAPSHOT_TIMEOUT", "SnapshotUnavailable", "git_snapshot", "project_instructions"]

STATUS_CAP = 2000
INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
INSTRUCTIONS_CAP = 20_000
SNAPSHOT_TIMEOUT = 5.0  # seconds for each git call of the snapshot


class SnapshotUnavailable(ChimeraError):
    """Git did not answer in time (or the run was interrupted): there is no snapshot; the message says why."""


def _git(git: str, workdir: Path, *args: str, stop: GitStop | None = None) -> str | None:
    try:
        proc = run_git(
            git,
            args,
            cwd=workdir,
            where=["-C", str(workdir), "--no-optional-locks"],
            timeout=SNAPSHOT_TIMEOUT,
            stop=stop,
        )
    except subprocess.TimeoutExpired:
        raise SnapshotUnavailable(
            f"`git {args[0]}` did not answer within {git_timeout(SNAPSHOT_TIMEOUT):g}s in {workdir} (is a .gitignore, "
            ".gitattributes or included config a named pipe?); the run goes on without it "
            "(set CHIMERA_GIT_TIMEOUT=SECONDS to wait longer)"
        ) from None
    except OSError:  # no git to start, or stopped (GitStopped)
        if stop is not None and stop.stopped:
            raise SnapshotUnavailable("the run was interrupted while git read the workspace") from None
        return None
    # rstrip only: the first `status --short` line may start with a meaningful space (" M" = unstaged).
    return proc.stdout.decode(errors="replace").rstrip() if proc.returncode == 0 else None


def git_snapshot(workdir: Path, *, stop: GitStop | None = None) -> str | None:
    """A short description of the repository at ``workdir``, or None when it is not one.

    Raises SnapshotUnavailable when a git call timed out (killed, with its process
    group) or ``stop`` was stopped.
    """
    git = git_executable()
    if git is None or _git(git, workdir, "rev-parse", "--is-inside-work-tree", stop=stop) != "true":
        return None
    branch = _git(git, workdir, "branch", "--show-current", stop=stop) or "(detached HEAD)"
    default = _git(git, workdir, "symbolic-ref", "--short", "refs/remotes/origin/HEAD", stop=stop)
    default = default.removeprefix("origin/") if default else None
    if default is None:
        local = _git(git, workdir, "branch", "--list", "main", "master", "--format=%(refname:short)", stop=stop) or ""
        default = local.splitlines()[0] if local else None
    status = _git(git, workdir, "status", "--short", "--ignore-submodules=dirty", stop=stop) or ""
    if len(status) > STATUS_CAP:
        cut = status.rfind("\n", 0, STATUS_CAP)
        rest = status.count("\n", cut + 1) + 1
        status = status[: max(cut, 0)] + f"\n... and {rest} more changed paths"
    log = _git(git, workdir, "log", "--oneline", "-n", "5", "--no-decorate", "--no-show-signature", stop=stop)
    log = log or "(no commits yet)"
    lines = [f"Git branch: {branch}"]
    if default:
        lines.append(f"Default branch: {default}")
    lines += ["Status:", status or "(clean)", "Recent commits:", log]
    return "\n".join(lines)


def project_instructions(workdir: Path, mask: Callable[[str], str] = str) -> str | None:
    """The workspace's AGENTS.md and CLAUDE.md, with their names, or None when there are none.

    Each is given to ``mask`` (the secrets to hide) before it is cut to ``INSTRUCTIONS_CAP``, so a
    secret at the cut is never left half shown.
    """
    parts = []
    try:
        root = workdir.resolve()
    except (OSError, RuntimeError):
        return None
    for name in INSTRUCTION_FILES:
        try:
            path = (workdir / name).resolve()
            if not path.is_relative_to(root):
                continue  # a link out of the workspace: what it leads to is not the project's to show
            with open_regular(path) as fh:  # never more than is shown: 4 bytes a character at most
                text = mask(fh.read(INSTRUCTIONS_CAP * 4).decode("utf-8", "replace"))[:INSTRUCTIONS_CAP].strip()
        except (OSError, RuntimeError):  # absent, not a regular file, unreadable, a link loop
            continue
        if text:
            parts.append(f"<{name}>\n{text}\n</{name}>")
    return "\n\n".join(parts) if parts else None
