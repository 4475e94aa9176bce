"""A disk that fills under `chimera compare`: a variant that cannot copy REF's files or save what it does has
an honest row (failed, and why), never a success or a crash, and the others' rows still come.

A full disk is stood in for with RLIMIT_FSIZE set in the child (see tests/cli/test_full_disk.py)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera_command, run_here
from tests.compare_helpers import files_at_most, named_session, writes
from tests.fake_anthropic import FakeAnthropic, by_model
from tests.switch_helpers import answer_node, folder_digest, two_runs


def compare(session_id: str, env: dict[str, str], scratch: Path, limit: int) -> subprocess.CompletedProcess[str]:
    """`chimera compare` of two variants from before-v2, no file it writes growing past ``limit`` bytes."""
    return subprocess.run(
        [*chimera_command(), "compare", session_id, "--from", "before-v2", "--try", "model=m1", "--try", "model=m2",
         "--json"],
        capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL,
        env={**os.environ, **env, "TMPDIR": str(scratch)}, preexec_fn=files_at_most(limit),
    )  # fmt: skip


def finished(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    """The rows of compare's last line, by label; no traceback on the way."""
    assert "Traceback" not in proc.stderr
    document = json.loads(proc.stdout.splitlines()[-1])
    assert document["type"] == "compare_finished"
    return {row["label"]: row for row in document["rows"]}


def big_session(api: FakeAnthropic, model_env: dict[str, str], project: Path, home: Path) -> str:
    """A session whose point ``before-v2`` holds big.txt, 300 KB (of text that packs small in the checkpoints)."""
    (project / "big.txt").write_text("a line of the big file\n" * 13_000)
    session_id = two_runs(api, model_env, project)
    named = run_here("checkpoint", session_id, "before-v2", "--node", answer_node(home, session_id, "Wrote v1."))
    assert named.returncode == 0, named.stderr
    return session_id


def test_a_copy_the_disk_cannot_hold_is_a_failed_row_saying_so(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """REF's files do not fit on the disk the scratch copies go to: each variant's row says it failed, that its
    copy could not be made and why (the disk's words), with no branch; nothing is asked of the model, the
    workspace is untouched, no copy is left, exit 1."""
    session_id = big_session(api, model_env, project, isolated_env)
    before = folder_digest(project)
    sent = len(api.requests)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = compare(session_id, model_env, scratch, 200_000)
    assert proc.returncode == 1, proc.stderr
    rows = finished(proc)
    for row in rows.values():
        assert (row["outcome"], row["node"], row["files"], row["verified"]) == ("failed", None, [], None)
        assert f"could not be made in {scratch}: File too large" in row["error"]
    assert len(api.requests) == sent
    assert folder_digest(project) == before
    assert list(scratch.iterdir()) == []


@pytest.mark.parametrize("room", [0, 400])
def test_a_session_the_disk_cannot_grow_is_a_failed_row_saying_so(
    room: int, api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, tmp_path: Path
) -> None:
    """The session's file cannot grow by one record (or by a few) once the variants start: each row says it
    failed and that the session could not be saved (with no room at all, no branch), the leaf is where it was,
    no copy is left, exit 1."""
    session_id = named_session(api, model_env, project, isolated_env)
    folder = next((isolated_env / "sessions").glob(f"{session_id}*"))
    entries = folder / "entries.jsonl"
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        leaf = store.tree.leaf
    api.responder = by_model({"m1": writes("c.txt", "c\n", "done", "m1"), "m2": writes("d.txt", "d\n", "done", "m2")})
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = compare(session_id, model_env, scratch, entries.stat().st_size + room)
    assert proc.returncode == 1, proc.stderr
    rows = finished(proc)
    for row in rows.values():
        assert row["outcome"] == "failed", row
        if room == 0:
            assert (row["node"], row["checkpoint"]) == (None, None)
        assert "could not save session" in row["error"]
        assert "File too large" in row["error"]
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.leaf == leaf
    assert list(scratch.iterdir()) == []
