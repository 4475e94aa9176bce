"""Provides the one way checkpoints run git: on the shadow repository only, scrubbed, with a timeout.

Every call goes through :func:`~chimera.core.gitsafe.run_git` (a minimal
environment with no API key and no ``GIT_*`` from outside, no system config,
every program-naming config key overridden), names the shadow git dir, work
tree and index explicitly, and turns off line-ending conversion and signing,
so the person's own ``.git`` is never opened for writing, nothing a config or
``.gitattributes`` names ever runs, and a clean CI machine behaves like a laptop.
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from chimera.core.errors import ChimeraError, ConfigError, WorkspaceError
from chimera.core.gitsafe import git_executable, git_timeout, run_git
from chimera.core.sessions.checkpoints.places import check_git_dir

__all__ = [
    "EMPTY_TREE",
    "FIXED_DATE",
    "Change",
    "CheckpointError",
    "CheckpointTimeout",
    "Git",
    "check_id",
    "parse_raw",
    "split",
]

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
FIXED_DATE = "@946684800 +0000"  # 2000-01-01: a snapshot's id depends on its files and label only

_HEX = re.compile(r"[0-9a-f]{4,64}")
_SETTINGS = (  # hooks, fsmonitor, signing and automatic gc are off in every git call (gitsafe)
    ("core.autocrlf", "false"),
    ("core.safecrlf", "false"),
    ("core.symlinks", "true"),
    ("core.fileMode", "true"),
    ("core.splitIndex", "false"),
    ("core.logAllRefUpdates", "false"),
    ("core.fsync", "committed"),  # a snapshot is on disk before a restore rewrites anything
    ("core.fsyncMethod", "batch"),
    ("advice.addEmbeddedRepo", "false"),
    ("user.name", "chimera"),
    ("user.email", "chimera@localhost"),
)


class CheckpointError(ChimeraError):
    """A snapshot is missing, or git failed on the shadow repository."""


class CheckpointTimeout(CheckpointError):
    """Git did not answer within its timeout on the shadow repository (it was killed, with its process group)."""


@dataclass(frozen=True)
class Change:
    """One path of ``git diff-tree --raw``: how the present (old) and the target differ there."""

    status: str  # A (only in the target), D (only now), M or T (in both, different)
    old_mode: str  # "000000" when absent
    mode: str  # the target's mode, "000000" when absent
    blob: str  # the target's content
    path: str
    old_blob: str = "0" * 40  # the present's content (all zeros when absent)


class Git:
    """Runs git on one shadow repository (``git_dir``) whose work tree is ``workspace``."""

    def __init__(self, workspace: Path, git_dir: Path, timeout: float, index: Path | None = None) -> None:
        exe = git_executable()
        if exe is None:
            raise ConfigError("git is needed for checkpoints and is not on PATH: install git to pin the workspace")
        self.exe = exe
        self.workspace = workspace
        self.git_dir = git_dir
        self.timeout = timeout
        self.index = index if index is not None else git_dir / "index"

    def __call__(
        self, *args: str, input: bytes = b"", ok: tuple[int, ...] = (0,), work_tree: bool = True, bare: bool = False
    ) -> bytes:
        """Git's stdout; CheckpointError when it fails, times out or reports ``fatal:``.

        ``work_tree=False`` runs on the shadow repository alone (the workspace may be gone);
        ``bare`` runs with no repository at all (``init``).
        """
        env = {
            "GIT_INDEX_FILE": str(self.index),
            "GIT_NO_REPLACE_OBJECTS": "1",
            "GIT_AUTHOR_DATE": FIXED_DATE,
            "GIT_COMMITTER_DATE": FIXED_DATE,
        }
        where = [] if bare else [f"--git-dir={self.git_dir}"]
        if work_tree and not bare:
            where.append(f"--work-tree={self.workspace}")
        if work_tree and not bare:
            self.check_workspace()
        if not bare:
            check_git_dir(self.git_dir)  # a link swapped in since the checks: refused, never followed
        try:
            proc = run_git(
                self.exe,
                args,
                cwd=self.workspace if work_tree and not bare else self.git_dir.parent,
                where=where,
                settings=_SETTINGS,
                env=env,
                input=input,
                timeout=self.timeout,
                config_files=None if bare else [self.git_dir / "config"],
            )
        except subprocess.TimeoutExpired:
            raise CheckpointTimeout(
                f"git {args[0]} took over {git_timeout(self.timeout):g}s on {self.workspace} (is a .gitignore or "
                ".gitattributes there a named pipe?): list big generated folders in .gitignore, or set "
                "CHIMERA_GIT_TIMEOUT=SECONDS to wait longer"
            ) from None
        except OSError as err:
            raise CheckpointError(
                f"cannot run git for checkpoints ({err.strerror or err}): check that git works"
            ) from None
        if proc.returncode not in ok or b"\nfatal:" in b"\n" + proc.stderr:
            lines = proc.stderr.decode(errors="replace").strip().splitlines() or [f"exit status {proc.returncode}"]
            raise CheckpointError(
                f"git {args[0]} failed on the checkpoints of {self.workspace} ({lines[-1]}): "
                f"the shadow repository is {self.git_dir}"
            )
        return proc.stdout

    def check_workspace(self) -> None:
        """WorkspaceError when the workspace folder is gone."""
        if not self.workspace.is_dir():
            raise WorkspaceError(
                f"workspace {self.workspace} is no longer there: put it back or start the session in an existing folder"
            )

    def missing(self, commit: str) -> CheckpointError:
        """The error for a snapshot id this repository does not hold."""
        return CheckpointError(
            f"checkpoint {commit[:12]} is not in {self.git_dir}: it was pruned, or belongs to another workspace"
        )


def check_id(commit: str) -> None:
    """CheckpointError unless ``commit`` looks like an object id (never a ref or an option)."""
    if not _HEX.fullmatch(commit):
        raise CheckpointError(f"{commit!r} is not a checkpoint id: pass the id a snapshot returned")


def split(out: bytes) -> list[bytes]:
    """The records of a ``-z`` output."""
    return [record for record in out.split(b"\0") if record]


def parse_raw(out: bytes) -> list[Change]:
    """Records of ``git diff-tree -r -z`` (raw format), skipping the ``A B`` header lines of ``--stdin``."""
    changes = []
    pos = 0
    while pos < len(out):
        if out[pos : pos + 1] != b":":
            pos = out.index(b"\n", pos) + 1
            continue
        meta_end = out.index(b"\0", pos)
        path_end = out.index(b"\0", meta_end + 1)
        old_mode, mode, old_blob, blob, status = out[pos + 1 : meta_end].decode().split(" ")
        changes.append(Change(status[:1], old_mode, mode, blob, os.fsdecode(out[meta_end + 1 : path_end]), old_blob))
        pos = path_end + 1
    return changes
