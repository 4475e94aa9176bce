"""Switch tests' helpers: a folder's digest, two recorded runs that change the project, and a node found by
its answer."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

__all__ = ["answer_node", "folder_digest", "nodes", "two_runs"]


def folder_digest(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` with the hash of its bytes (to prove nothing in it changed)."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def two_runs(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> str:
    """Run 1 writes a.txt (v1); run 2, resumed, edits it to v2 and adds b.txt. Returns the session id."""
    api.script(
        message(tool_use("w1", "write", {"path": "a.txt", "content": "v1\n"}), stop_reason="tool_use"),
        message(text("Wrote v1.")),
        message(
            tool_use("e1", "edit", {"path": "a.txt", "old": "v1", "new": "v2"}),
            tool_use("w2", "write", {"path": "b.txt", "content": "new\n"}),
            stop_reason="tool_use",
        ),
        message(text("Now v2, and b.")),
    )
    bypass = ("--permission-mode", "bypass", "--json")
    first = run_here("run", "write v1", "--workdir", str(project), *bypass, env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    second = run_here("run", "make it v2", "--resume", session_id, *bypass, env=model_env)
    assert second.returncode == 0, second.stderr
    return session_id


def nodes(home: Path, session_id: str) -> list[dict[str, object]]:
    """The session's nodes, as `chimera tree ID --json` lists them (in the CHIMERA_HOME of this process)."""
    proc = run_here("tree", session_id, "--json")
    assert proc.returncode == 0, proc.stderr
    return list(json.loads(proc.stdout)["nodes"])


def answer_node(home: Path, session_id: str, answer: str) -> str:
    """The id of the node whose summary is ``answer``."""
    return next(str(n["id"]) for n in nodes(home, session_id) if n["summary"] == answer)
