"""`chimera acp` writes nothing but the protocol to stdout, whatever runs inside it (a command that prints to its
own stdout and stderr, a stray print, a program that inherits the process's streams), never loads Textual or Rich,
and logs to CHIMERA_HOME/logs/acp.log."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from tests.acp_helpers import acp_agent, says
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


async def test_stdout_holds_only_json_rpc_and_textual_is_never_loaded(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """Every line on stdout is one JSON-RPC 2.0 message, through a turn whose command prints to both streams; the
    import log of the whole process names no textual or rich module; the log file says the agent started."""
    api.script(
        message(tool_use("b1", "bash", {"command": "echo to-stdout; echo to-stderr >&2"}), stop_reason="tool_use"),
        message(text("Printed.")),
    )
    async with acp_agent(model_env, project, "--permission-mode", "bypass", python=("-X", "importtime")) as agent:
        session = await agent.new_session(project)
        done = await agent.prompt(session, "print something")

    assert done.stop_reason == "end_turn"
    assert says(agent.client.updates) == "Printed."
    assert agent.raw, "nothing came on stdout"
    for line in agent.raw:
        assert line.endswith(b"\n")
        assert json.loads(line)["jsonrpc"] == "2.0", line
    imported = re.findall(r"^import time:.*\|\s+(\S+)$", agent.stderr, re.MULTILINE)
    assert "chimera.core.modes.acp.agent" in imported  # the log is the agent's own
    assert not [name for name in imported if name.split(".")[0] in ("textual", "rich")]
    log = (isolated_env / "logs" / "acp.log").read_text()
    assert "chimera acp" in log
    assert "started" in log


def test_what_else_writes_to_stdout_goes_to_stderr() -> None:
    """Once the protocol has its streams, a print and a child process's output reach stderr, and a child reads
    nothing of the protocol's input: stdout carries the protocol's bytes alone."""
    script = (
        "import os, subprocess\n"
        "from chimera.core.modes.acp.stdio import protocol_streams\n"
        "given_in, given_out = protocol_streams()\n"
        "print('a stray print', flush=True)\n"
        "subprocess.run(['sh', '-c', 'echo a child; cat'])\n"
        "os.write(given_out, os.read(given_in, 100))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=b'{"jsonrpc":"2.0"}\n', capture_output=True, timeout=30, check=True
    )
    assert done.stdout == b'{"jsonrpc":"2.0"}\n'
    assert b"a stray print" in done.stderr
    assert b"a child" in done.stderr
