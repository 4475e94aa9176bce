"""Provides ``git``: the person's own git, run in a folder with a committer set, for tests that need a repository.

The fixture ``git_project`` (in conftest.py) makes such a repository of the project folder.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

__all__ = ["git"]


def git(workdir: Path, *args: str) -> str:
    """``git -C workdir ARGS`` with a committer name and email set; its stdout. It must succeed."""
    return subprocess.run(
        ["git", "-C", str(workdir), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
