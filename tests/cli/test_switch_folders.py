"""A switch removes only the folders the agent's ``write`` made; folders the person made stay, with their modes.

The agent's files are deleted on a switch back; the folders they leave empty go
too only when Chimera's ``write`` created them. A folder the person made (empty,
or holding only what the agent wrote into it) is kept as it is, and the preview
lists it as kept. A folder in the way of a file the target holds is replaced
only when it is the agent's, never half way through a switch.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def run(model_env: dict[str, str], task: str, *args: str) -> str:
    proc = run_here("run", task, "--json", "--permission-mode", "bypass", *args, env=model_env)
    assert proc.returncode == 0, proc.stderr
    return str(json.loads(proc.stdout.splitlines()[0])["session_id"])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_switch_back_keeps_the_folders_the_person_made_and_removes_the_agents(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """notes/ (the person's, mode 750) and its empty sub/ stay; gen/ and gen/deep/, which write made, go."""
    api.script(message(text("Looked.")))
    session_id = run(model_env, "look", "--workdir", str(git_project))
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        looked = str(store.tree.leaf)
    (git_project / "notes" / "sub").mkdir(parents=True)
    (git_project / "notes").chmod(0o750)
    (git_project / "empty").mkdir(mode=0o700)
    api.script(
        message(
            tool_use("w1", "write", {"path": "notes/todo.txt", "content": "the agent's todo\n"}),
            tool_use("w2", "write", {"path": "gen/deep/out.txt", "content": "generated\n"}),
            tool_use("w3", "write", {"path": "empty/x.txt", "content": "x\n"}),
            stop_reason="tool_use",
        ),
        message(text("Wrote them.")),
    )
    run(model_env, "write", "--resume", session_id)
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        leaf = str(store.tree.leaf)

    back = run_here("switch", session_id, looked, "--yes")
    assert back.returncode == 0, back.stderr
    said = [" ".join(line.split()) for line in back.stdout.splitlines()]
    assert "delete notes/todo.txt (the agent's tools made it)" in said
    assert "delete gen/deep/out.txt (the agent's tools made it)" in said
    assert "keep notes/ (a folder that is not the agent's: kept as it is)" in said
    assert "keep empty/ (a folder that is not the agent's: kept as it is)" in said
    assert not any("gen/" in line and line.startswith("keep") for line in said)
    assert not (git_project / "notes" / "todo.txt").exists()
    assert (git_project / "notes" / "sub").is_dir()
    assert mode(git_project / "notes") == 0o750
    assert (git_project / "empty").is_dir()
    assert mode(git_project / "empty") == 0o700
    assert not (git_project / "gen").exists()

    forth = run_here("switch", session_id, leaf, "--yes")
    assert forth.returncode == 0, forth.stderr
    assert (git_project / "notes" / "todo.txt").read_text() == "the agent's todo\n"
    assert (git_project / "gen" / "deep" / "out.txt").read_text() == "generated\n"
    assert mode(git_project / "notes") == 0o750


def test_a_folder_of_the_persons_where_the_target_has_a_file_is_kept_and_the_switch_completes(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """The target's file `out` is skipped while the person's folder out/ (with an empty sub-folder) holds the place."""
    api.script(
        message(tool_use("w1", "write", {"path": "out", "content": "a file\n"}), stop_reason="tool_use"),
        message(text("Wrote out.")),
    )
    session_id = run(model_env, "write out", "--workdir", str(git_project))
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        wrote_out = str(store.tree.leaf)
    (git_project / "out").unlink()
    (git_project / "out" / "keep").mkdir(parents=True)
    api.script(
        message(tool_use("w2", "write", {"path": "out/a.txt", "content": "inside\n"}), stop_reason="tool_use"),
        message(text("Wrote inside.")),
    )
    run(model_env, "write inside", "--resume", session_id)

    back = run_here("switch", session_id, wrote_out, "--yes")
    assert back.returncode == 0, back.stderr
    said = [" ".join(line.split()) for line in back.stdout.splitlines()]
    assert "delete out/a.txt (the agent's tools made it)" in said
    assert any(line.startswith("skip out ") for line in said), said
    assert (git_project / "out" / "keep").is_dir()
    assert not (git_project / "out" / "a.txt").exists()
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.pending_switch is None
        assert store.tree.leaf == wrote_out
