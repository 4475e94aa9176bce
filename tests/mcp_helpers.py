"""The MCP reference servers and the conformance suite the tests run against (``tests/mcp_servers/package.json``,
pinned, with its lock; the suite at 0.1.13, the last release that runs on Node.js 20).

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

__all__ = ["CONFORMANCE", "EVERYTHING", "conformance_suite", "everything_server"]

FOLDER = Path(__file__).parent / "mcp_servers"
EVERYTHING = FOLDER / "node_modules" / ".bin" / "mcp-server-everything"
CONFORMANCE = FOLDER / "node_modules" / ".bin" / "conformance"


def everything_server() -> Path:
    """The path of ``mcp-server-everything`` (the reference server of every MCP feature), installed if need be."""
    return _installed(EVERYTHING)


def conformance_suite() -> Path:
    """The path of the MCP conformance suite's command (``conformance``), installed if need be."""
    return _installed(CONFORMANCE)


def _installed(program: Path) -> Path:
    if program.exists():
        return program
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("the MCP reference servers need npm (Node.js), which this machine does not have")
    with (FOLDER / ".install.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one test worker installs; the others wait for it
        if not program.exists():
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--silent"], cwd=FOLDER, capture_output=True, text=True
            )
            if done.returncode != 0:
                pytest.fail(f"npm ci in {FOLDER} failed: {done.stderr.strip()[-500:]}")
    return program
