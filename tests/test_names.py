"""A file whose name is not UTF-8 never breaks a run: tools show it as bad\\xff.txt, take that name back,
and no lone surrogate reaches the model, the events or the session."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.core.executor import Executor, ToolCall
from chimera.core.tool_group import ToolGroup
from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.edit import Edit
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep
from chimera.core.tools.read import Read
from tests.anthropic_harness import serve_fake
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.test_cli import chimera_command


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    return root


def put(ws: Path, relative: bytes, content: bytes) -> None:
    """Write ``content`` at the byte path ``relative`` under ``ws``, making folders."""
    path = os.path.join(os.fsencode(ws), relative)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(content)


async def test_read_edit_glob_and_grep_take_an_escaped_name_back(ws: Path, tmp_path: Path) -> None:
    """The name glob shows (`dir\\xfe/bad\\xff.txt`) works as a path for read, edit, glob and grep."""
    put(ws, b"dir\xfe/bad\xff.txt", b"alpha\n")
    ctx = ToolContext(workspace=ws, spill_dir=tmp_path / "spill")
    listed = await Glob().run({"pattern": "**"}, ctx)
    assert listed.output == "dir\\xfe/bad\\xff.txt\n"
    shown = listed.output.strip()
    assert (await Read().run({"path": shown}, ctx)).output == "     1\talpha\n"
    edited = await Edit().run({"path": shown, "old": "alpha", "new": "beta"}, ctx)
    assert edited.output == "Edited dir\\xfe/bad\\xff.txt: replaced 1 occurrence (line 1)."
    assert Path(os.fsdecode(os.path.join(os.fsencode(ws), b"dir\xfe/bad\xff.txt"))).read_bytes() == b"beta\n"
    assert (await Glob().run({"pattern": "*", "path": "dir\\xfe"}, ctx)).output == "dir\\xfe/bad\\xff.txt\n"
    assert (await Grep().run({"pattern": "beta", "path": shown}, ctx)).output == "dir\\xfe/bad\\xff.txt:1:beta\n"


class Careless:
    """A test tool that puts a name it listed into its result as Python decoded it, lone surrogate and all."""

    name = "careless"
    description = "lists a name"
    input_schema = schema({}, [])
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("found bad\udcff.txt\n", data={"first": "bad\udcff.txt", "count": 1})


async def test_no_tool_result_carries_a_lone_surrogate_to_the_model(ws: Path, tmp_path: Path) -> None:
    """Whatever a tool returns, the executor hands on valid UTF-8 text: stray bytes of a name become \\xHH."""
    executor = Executor(ToolGroup([Careless()]), ws, tmp_path / "spill")
    [outcome] = await executor.run([ToolCall("c1", "careless", {})], print)
    assert (outcome.result.output, outcome.result.data) == (
        "found bad\\xff.txt\n",
        {"first": "bad\\xff.txt", "count": 1},
    )


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with serve_fake(monkeypatch) as fake:
        yield fake


def test_a_run_over_such_names_completes_and_records_them_escaped(
    api: FakeAnthropic, ws: Path, isolated_env: Path
) -> None:
    """`chimera run` with glob, grep and read over a name that is not UTF-8: exit 0, escaped names everywhere."""
    put(ws, b"bad\xff.txt", b"TODO caf\xe9\n")
    put(ws, b"good.txt", b"TODO\n")
    api.script(
        message(
            tool_use("t1", "glob", {"pattern": "**"}),
            tool_use("t2", "grep", {"pattern": "TODO"}),
            tool_use("t3", "read", {"path": "bad\\xff.txt"}),
            stop_reason="tool_use",
        ),
        message(text("Seen.")),
    )
    proc = subprocess.run(
        [*chimera_command(), "run", "look", "--json", "--workdir", str(ws), "--permission-mode", "bypass"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        env={
            **os.environ,
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "k",
            "CHIMERA_MODEL": "claude-sonnet-4-6",
        },
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    results = {e["call_id"]: e["output"] for e in events if e["type"] == "tool_call_finished"}
    assert results == {
        "t1": "bad\\xff.txt\ngood.txt\n",
        "t2": "bad\\xff.txt:1:TODO caf\ufffd\ngood.txt:1:TODO\n",
        "t3": "     1\tTODO caf\ufffd\n",
    }
    sent = json.dumps(api.requests[-1].messages)
    assert "bad\\\\xff.txt" in sent  # the model got the escaped name
    for path in isolated_env.rglob("*.jsonl"):
        path.read_bytes().decode("utf-8")  # the session's records are UTF-8 text
