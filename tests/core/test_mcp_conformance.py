"""Chimera's MCP client against the protocol's own conformance suite (``@modelcontextprotocol/conformance``): the
suite starts a server for each client scenario and runs ``tests/mcp_servers/conformance_client.py`` (Chimera's
``Connection`` as a program) against it, then checks what the client did. OAuth scenarios are not run: Chimera
reaches an HTTP server with the headers its settings give (a token), not by an OAuth flow."""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp_helpers import FOLDER, conformance_suite


@pytest.mark.parametrize("scenario", ["initialize", "tools_call", "sse-retry"])
def test_the_client_passes_the_conformance_suites_scenario(scenario: str, tmp_path: Path) -> None:
    """The suite's checks for the scenario all pass, with no warning."""
    client = shlex.join([sys.executable, str(FOLDER / "conformance_client.py")])
    done = subprocess.run(
        [str(conformance_suite()), "client", "--command", client, "--scenario", scenario],
        capture_output=True,
        text=True,
        timeout=50,
        cwd=tmp_path,
    )
    report = done.stdout + done.stderr  # the suite writes its report to either, by version
    assert done.returncode == 0, report[-3000:]
    assert "0 failed, 0 warnings" in report
    assert "OVERALL: PASSED" in report
