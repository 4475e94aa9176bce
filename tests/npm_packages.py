"""Provides ``installed``: a program from one of the tests' pinned npm folders (a ``package.json`` and its lock,
such as ``tests/mcp_servers`` and ``tests/acp_clients``), installed with ``npm ci`` the first time a test needs it.

``.ci/run`` installs those folders itself; run without it (the README's test command), the first test that needs
one installs it the same way, once, whichever test worker gets there first (a lock file holds the others). With
no ``npm`` on the machine the test skips, saying what it needed.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["installed"]


def installed(program: Path, what: str) -> Path:
    """``program`` (a path under a pinned folder's ``node_modules``), its folder installed with ``npm ci`` if it
    is not there yet; without npm the test skips, naming ``what`` needed it."""
    if program.exists():
        return program
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip(f"{what} need npm (Node.js), which this machine does not have")
    folder = next(parent for parent in program.parents if parent.name == "node_modules").parent
    with (folder / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test worker installs; the others wait for it
        if not program.exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=folder, capture_output=True, text=True
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci in {folder} failed: {done.stderr.strip()[-500:]}")
    return program
