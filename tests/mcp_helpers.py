"""The MCP reference servers the tests run against (``tests/mcp_servers/package.json``, pinned, with its lock).

``.ci/run`` installs them with ``npm ci``; run without it (the README's test command), the first test that
needs them installs them the same way, once, whichever test worker gets there first (a lock file holds the
others). With no ``npm`` on the machine those tests skip, saying so.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["EVERYTHING", "everything_server"]

FOLDER = Path(__file__).parent / "mcp_servers"
EVERYTHING = FOLDER / "node_modules" / ".bin" / "mcp-server-everything"


def everything_server() -> Path:
    """The path of ``mcp-server-everything`` (the reference server of every MCP feature), installed if need be."""
    if EVERYTHING.exists():
        return EVERYTHING
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("the MCP reference servers need npm (Node.js), which this machine does not have")
    with (FOLDER / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test worker installs; the others wait for it
        if not EVERYTHING.exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=FOLDER, capture_output=True, text=True
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci in {FOLDER} failed: {done.stderr.strip()[-500:]}")
    return EVERYTHING
