"""Provides the ACP clients of other implementations that tests run ``chimera acp`` under: acpx, the headless CLI
client, and the TypeScript SDK's ``ClientSideConnection`` (``tests/acp_clients/one_turn.mjs``), both pinned in
``tests/acp_clients`` (``package.json`` and its lock, installed by ``.ci/run`` or on first need,
``tests.npm_packages``); and Toad, where it can be installed. A test whose client cannot be had skips, naming why.

acpx 0.19.1 declares Node.js 22.13 or newer; what these tests use of it runs on the Node.js 20 of these machines.
The lock lists ``@openclaw/fs-safe``'s builds for other platforms by hand (version, os and cpu, no integrity): the
registry these machines reach serves only its Linux x64 builds, and ``npm ci`` refuses a lock that leaves any out.

acpx with ``--format json`` prints every JSON-RPC message of the connection, both ways, a line each
(``Transcript``): the agent's requests and the client's answers share one numbering per side, so an answer is
found as the first line after its request with the same id and no method.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.acp_helpers import DEADLINE
from tests.cli_runner import chimera_command
from tests.npm_packages import installed

__all__ = ["Transcript", "acpx_command", "node", "one_turn_command", "run_client", "toad_command"]

FOLDER = Path(__file__).parent / "acp_clients"
ACPX = FOLDER / "node_modules" / ".bin" / "acpx"
TYPESCRIPT_SDK = FOLDER / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json"
ONE_TURN = FOLDER / "one_turn.mjs"
TOAD_PYTHON = (3, 14)  # batrachian-toad (Toad on PyPI) requires Python 3.14 or newer, every release of it


def node() -> str:
    """The ``node`` program, or the test skipped: the clients are Node.js programs."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("the acpx and TypeScript SDK clients need Node.js (node), which this machine does not have")
    return found


def acpx_command(cwd: Path, *options: str, prompt: str) -> list[str]:
    """``acpx`` running ``chimera acp`` (``--agent``) headless for one prompt in ``cwd`` (``exec``: a session of its
    own, none saved), printing the connection's JSON-RPC (``--format json --json-strict``), with ``options`` (the
    permission mode: ``--approve-all``, ``--deny-all``)."""
    node()
    program = installed(ACPX, "the ACP clients acpx and the TypeScript SDK")
    agent = shlex.join([*chimera_command(), "acp"])
    return [
        str(program),
        "--format",
        "json",
        "--json-strict",
        *options,
        "--cwd",
        str(cwd),
        "--agent",
        agent,
        "exec",
        prompt,
    ]


def one_turn_command(cwd: Path, answer: str, prompt: str) -> list[str]:
    """``one_turn.mjs``: the TypeScript SDK's client running one turn of ``chimera acp`` in ``cwd``, every question
    answered with the option of kind ``answer``; it prints what it received as one JSON object."""
    program = node()
    installed(TYPESCRIPT_SDK, "the ACP clients acpx and the TypeScript SDK")
    return [program, str(ONE_TURN), str(cwd), answer, prompt, "--", *chimera_command(), "acp"]


def run_client(command: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``command`` run to its end with this process's environment and ``env``, no stdin; its output as text."""
    return subprocess.run(
        command,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=DEADLINE,
    )


def toad_command() -> str:
    """The ``toad`` program, or the test skipped naming why it cannot be had here."""
    found = shutil.which("toad")
    if found is not None:
        return found
    wanted = ".".join(map(str, TOAD_PYTHON))
    if sys.version_info < TOAD_PYTHON and not shutil.which(f"python{wanted}"):
        here = f"{sys.version_info.major}.{sys.version_info.minor}"
        pytest.skip(f"toad needs Python {wanted} (batrachian-toad on PyPI), and this machine has Python {here}")
    pytest.skip(f"toad is not installed: pip install batrachian-toad with Python {wanted} puts it on PATH")


@dataclass
class Transcript:
    """The JSON-RPC messages of one connection, in the order they passed, both ways."""

    messages: list[dict[str, Any]]

    @classmethod
    def of(cls, output: str) -> Transcript:
        """Every line of ``output``, each one JSON-RPC 2.0 message (an assertion error names a line that is not)."""
        messages = []
        for line in output.splitlines():
            message = json.loads(line)
            assert message.get("jsonrpc") == "2.0", line
            messages.append(message)
        return cls(messages)

    def updates(self, kind: str) -> list[dict[str, Any]]:
        """The ``session/update`` notifications' updates of ``kind`` (``tool_call``, ``agent_message_chunk``…)."""
        return [
            m["params"]["update"]
            for m in self.messages
            if m.get("method") == "session/update" and m["params"]["update"]["sessionUpdate"] == kind
        ]

    def says(self) -> str:
        """The agent's words: every ``agent_message_chunk``'s text, joined."""
        return "".join(u["content"]["text"] for u in self.updates("agent_message_chunk"))

    def exchange(self, method: str) -> tuple[dict[str, Any], dict[str, Any]]:
        """The first request of ``method`` and the answer to it."""
        at, asked = next((i, m) for i, m in enumerate(self.messages) if m.get("method") == method and "id" in m)
        answer = next(m for m in self.messages[at + 1 :] if m.get("id") == asked["id"] and "method" not in m)
        return asked, answer
