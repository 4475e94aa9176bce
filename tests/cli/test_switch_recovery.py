"""A switch killed half way is undone exactly, and packing the snapshots never cuts a switch's way back."""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import assert_one_line_error, chimera_command, run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.switch_helpers import answer_node, two_runs

FILES = 1500

# Runs `chimera` with a restore that SIGKILLs its own process at the moment it would rename
# its Nth file into place (argv[1] is N): a temporary file written, the rest of the files not.
_DIE_MID_RESTORE = """
import os, signal, sys, types
from chimera.core.sessions.checkpoints import restore
from chimera.tui.cli import main

left = int(sys.argv[1])

def replace(src, dst):
    global left
    if left == 0:
        os.kill(os.getpid(), signal.SIGKILL)
    left -= 1
    return os.replace(src, dst)

restore.os = types.SimpleNamespace(**{**vars(os), "replace": replace})
sys.exit(main(sys.argv[2:]))
"""

# Runs `chimera` with a snapshot store that is packed on every close, however small.
_PACK_ON_CLOSE = """
import sys
from chimera.core.sessions import pins as workspace_pins
from chimera.tui.cli import main

workspace_pins.PACK_ABOVE = 0
sys.exit(main(sys.argv[1:]))
"""


def files_of(folder: Path) -> dict[str, str]:
    """Every file under ``folder`` (any name, hidden ones too) with the hash of its bytes."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def big_session(api: FakeAnthropic, model_env: dict[str, str], workdir: Path) -> str:
    """``FILES`` files; run 1 only looks ("Looked."); run 2's bash call changes them all, its write adds new.txt."""
    for i in range(FILES):
        path = workdir / "pkg" / f"m{i % 20:02d}" / f"f{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"file {i}, as the person wrote it\n")
    api.script(
        message(text("Looked.")),
        message(
            tool_use("b1", "bash", {"command": "for f in pkg/*/*.txt; do echo 'changed by the agent' >> \"$f\"; done"}),
            tool_use("w1", "write", {"path": "new.txt", "content": "the agent's new file\n"}),
            stop_reason="tool_use",
        ),
        message(text("Changed them all.")),
    )
    bypass = ("--permission-mode", "bypass")
    first = run_here("run", "look", "--json", "--workdir", str(workdir), *bypass, env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    second = run_here("run", "change everything", "--resume", session_id, *bypass, env=model_env)
    assert second.returncode == 0, second.stderr
    return session_id


def die_mid_restore(after: int, *args: str) -> None:
    """Run ``chimera ARGS`` and have it SIGKILLed as it renames its ``after``-th restored file into place."""
    killed = subprocess.run(
        [sys.executable, "-c", _DIE_MID_RESTORE, str(after), *args], capture_output=True, text=True, timeout=120
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr


def test_a_switch_killed_mid_restore_is_undone_exactly_and_poisons_nothing(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """kill -9 mid-restore of 1,500 files (and again mid-undo): the command resume names puts every file back."""
    workdir = tmp_path / "w"
    workdir.mkdir()
    session_id = big_session(api, model_env, workdir)
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        leaf = str(store.tree.leaf)
        looked = store.tree.path()[1].id  # the first answer: the files as they were before run 2
    (workdir / "pkg" / "m01" / "f00001.txt").write_text("an unsaved edit of the person's\n")
    (workdir / "mine.txt").write_text("the person's own, never snapshotted\n")
    before_switch = files_of(workdir)

    die_mid_restore(700, "switch", session_id, looked, "--yes")
    half = files_of(workdir)
    assert half != before_switch  # the kill did land mid-restore...
    assert any(".chimera-tmp" in path for path in half)  # ...with a file half way into place

    resumed = run_here("run", "go on", "--resume", session_id, env=model_env)
    assert resumed.returncode == 2
    (line,) = resumed.stderr.strip().splitlines()
    assert "puts the files back as they were before that switch" in line
    assert "it does not finish it" in line
    command = shlex.split(line.split("`")[1])
    refused = run_here("checkpoint", session_id, "half-way")  # it would pin the half-restored files
    assert_one_line_error(refused, "middle of a switch", " ".join(command))
    assert command[:2] == ["chimera", "switch"]
    die_mid_restore(300, *command[1:])  # killed again, while undoing: the undo can simply run again
    undone = subprocess.run([*chimera_command(), *command[1:]], capture_output=True, text=True, timeout=120)
    assert undone.returncode == 0, undone.stderr
    assert "Undone" in undone.stdout
    assert files_of(workdir) == before_switch  # every file exactly as before the interrupted switch
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.leaf == leaf
        assert store.tree.pending_switch is None

    there = run_here("switch", session_id, looked, "--yes", timeout=120)
    assert there.returncode == 0, there.stderr
    at_looked = files_of(workdir)
    assert len([p for p in at_looked if p.startswith("pkg/")]) == FILES
    assert all(not (workdir / p).read_text().endswith("changed by the agent\n") for p in at_looked)
    assert "new.txt" not in at_looked  # the agent's write made it
    assert (workdir / "mine.txt").exists()  # never the agent's

    back = run_here("switch", session_id, leaf, "--yes", timeout=120)
    assert back.returncode == 0, back.stderr
    assert files_of(workdir) == before_switch  # the leaf's files were never replaced by half-restored ones


def test_packing_keeps_the_snapshot_a_switch_saved_unsaved_edits_in(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, isolated_env: Path
) -> None:
    """Unsaved edits saved by a switch survive the store being packed at close: switching back brings them back."""
    session_id = two_runs(api, model_env, git_project)
    leaf = json.loads(run_here("tree", session_id, "--json").stdout)["leaf"]
    (git_project / "a.txt").write_text("unsaved hand edit\n")
    (git_project / "notes.txt").write_text("never snapshotted by a pin\n")
    away = run_here("switch", session_id, answer_node(isolated_env, session_id, "Wrote v1."), "--yes")
    assert away.returncode == 0, away.stderr
    (git_project / "notes.txt").unlink()
    api.script(message(text("Another road.")))
    packed = subprocess.run(
        [sys.executable, "-c", _PACK_ON_CLOSE, "run", "other", "--resume", session_id, "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **model_env},
    )
    assert packed.returncode == 0, packed.stderr
    objects = isolated_env / "sessions" / session_id / "checkpoints.git" / "objects"
    assert list((objects / "pack").glob("*.pack"))  # the store was packed...
    assert not [d for d in objects.iterdir() if len(d.name) == 2]  # ...and nothing was left loose
    back = run_here("switch", session_id, leaf, "--yes")
    assert back.returncode == 0, back.stderr
    assert (git_project / "a.txt").read_text() == "unsaved hand edit\n"
    assert (git_project / "notes.txt").read_text() == "never snapshotted by a pin\n"


def small_session(api: FakeAnthropic, model_env: dict[str, str], workdir: Path, count: int) -> str:
    """``count`` files; run 1 only looks ("Looked."); run 2's bash call changes them all, its write adds new.txt."""
    for i in range(count):
        (workdir / "pkg").mkdir(parents=True, exist_ok=True)
        (workdir / "pkg" / f"f{i:03d}.txt").write_text(f"file {i}, as the person wrote it\n")
    api.script(
        message(text("Looked.")),
        message(
            tool_use("b1", "bash", {"command": "for f in pkg/*.txt; do echo 'changed by the agent' >> \"$f\"; done"}),
            tool_use("w1", "write", {"path": "new.txt", "content": "the agent's new file\n"}),
            stop_reason="tool_use",
        ),
        message(text("Changed them all.")),
    )
    bypass = ("--permission-mode", "bypass")
    first = run_here("run", "look", "--json", "--workdir", str(workdir), *bypass, env=model_env)
    assert first.returncode == 0, first.stderr
    session_id = str(json.loads(first.stdout.splitlines()[0])["session_id"])
    second = run_here("run", "change everything", "--resume", session_id, *bypass, env=model_env)
    assert second.returncode == 0, second.stderr
    return session_id


def test_undoing_a_killed_switch_first_saves_the_half_restored_files_under_a_name(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """The undo says it saves the files as they are, saves them as half-restored-1, then puts the old ones back;
    switching to that name brings back the half-restored files, with what the person did to them since."""
    workdir = tmp_path / "w"
    workdir.mkdir()
    session_id = small_session(api, model_env, workdir, 40)
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        leaf = str(store.tree.leaf)
        looked = store.tree.path()[1].id
    before_switch = files_of(workdir)

    die_mid_restore(20, "switch", session_id, looked, "--yes")
    (workdir / "pkg" / "f000.txt").write_text("the person's fix, made after the crash\n")
    (workdir / "after-crash.txt").write_text("written in the half-restored workspace\n")
    half = {path: digest for path, digest in files_of(workdir).items() if ".chimera-tmp" not in path}

    resumed = run_here("run", "go on", "--resume", session_id, env=model_env)
    assert resumed.returncode == 2
    (line,) = resumed.stderr.strip().splitlines()
    assert "saves the files as they are now" in line
    assert "puts the files back as they were before that switch" in line

    undone = run_here("switch", session_id, leaf, "--yes", timeout=120)
    assert undone.returncode == 0, undone.stderr
    said = " ".join(undone.stdout.split())
    assert said.index("First the files as they are now") < said.index("half-restored-1") < said.index("Undone")
    assert f"`chimera switch {session_id} half-restored-1` brings them back" in said
    assert files_of(workdir) == {**before_switch, "after-crash.txt": half["after-crash.txt"]}

    tree = run_here("tree", session_id)
    assert tree.returncode == 0, tree.stderr
    assert "half-restored-1" in tree.stdout
    listed = json.loads(run_here("tree", session_id, "--json").stdout)
    assert [s["name"] for s in listed["saved"]] == ["half-restored-1"]
    assert listed["leaf"] == leaf

    back = run_here("switch", session_id, "half-restored-1", "--yes", timeout=120)
    assert back.returncode == 0, back.stderr
    assert files_of(workdir) == half  # the half-restored files, the person's fix and new file included
    assert "half-restored-1" in back.stdout

    again = run_here("switch", session_id, leaf, "--yes", timeout=120)
    assert again.returncode == 0, again.stderr
    assert files_of(workdir) == {**before_switch, "after-crash.txt": half["after-crash.txt"]}
    refused = run_here("checkpoint", session_id, "half-restored-1")
    assert_one_line_error(refused, "half-restored-1", "another name")
