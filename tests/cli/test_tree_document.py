"""`chimera tree ID --json` writes its document a batch of nodes at a time: the whole is still one exact document."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.core.sessions.store import SessionStore
from chimera.tui.tree_command import tree_document
from tests.cli_runner import run_chimera


def test_the_document_written_in_batches_is_the_whole_document(isolated_env: Path, tmp_path: Path) -> None:
    """Past a batch's size, with steering characters, other scripts and labels in it: one line, the same values,
    and no raw escape reaching the terminal."""
    with SessionStore.create(isolated_env, "long", workdir=tmp_path, model="claude-sonnet-4-6") as store:
        first = store.add("user", {"role": "user", "content": "Begin \x1b[31mred\x1b[0m — ünïcode ✓"})
        for i in range(1_200):
            role = "assistant" if i % 2 == 0 else "user"
            store.add("assistant" if role == "assistant" else "user", {"role": role, "content": f"turn {i}\x07"})
        store.label(first.id, "start")
    shown = run_chimera("tree", "long", "--json")
    assert shown.returncode == 0, shown.stderr
    assert "\x1b" not in shown.stdout
    assert "\x07" not in shown.stdout
    assert shown.stdout.count("\n") == 1
    with SessionStore.open(isolated_env, "long", writable=False) as store:
        expected = tree_document(store)
    document = json.loads(shown.stdout)
    assert document == expected
    assert len(document["nodes"]) == 1_201
    assert document["nodes"][0]["labels"] == ["start"]
