"""The MCP reference servers and the conformance suite the tests run against (``tests/mcp_servers/package.json``,
pinned, with its lock; the suite at 0.1.13, the last release that runs on Node.js 20), and the fault fixture server
(``tests/mcp_servers/fault_server.py``, Python, written with the SDK's server API).

``.ci/run`` installs them with ``npm ci``; run without it (the README's test command), the first test that
needs them installs them the same way (``tests.npm_packages``). With no ``npm`` on the machine those tests skip,
saying so.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.npm_packages import installed

__all__ = ["CONFORMANCE", "EVERYTHING", "FAULT_SERVER", "conformance_suite", "everything_server", "fault_server"]

FOLDER = Path(__file__).parent / "mcp_servers"
EVERYTHING = FOLDER / "node_modules" / ".bin" / "mcp-server-everything"
CONFORMANCE = FOLDER / "node_modules" / ".bin" / "conformance"
FAULT_SERVER = FOLDER / "fault_server.py"


def everything_server() -> Path:
    """The path of ``mcp-server-everything`` (the reference server of every MCP feature), installed if need be."""
    return installed(EVERYTHING, "the MCP reference servers")


def conformance_suite() -> Path:
    """The path of the MCP conformance suite's command (``conformance``), installed if need be."""
    return installed(CONFORMANCE, "the MCP reference servers")


def fault_server(*behaviours: str) -> tuple[str, tuple[str, ...]]:
    """The command and arguments that start the fault fixture server with ``behaviours`` (``junk``, ``only-junk``,
    ``silent``, ``pid=PATH``: see ``tests/mcp_servers/fault_server.py``), with this Python, which has the SDK."""
    return sys.executable, (str(FAULT_SERVER), *behaviours)
