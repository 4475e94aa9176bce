"""A replay played at once joins an answer's words into a few pieces: a reader's cost is per piece, so a long
answer replayed at *instant* costs about what it cost live, not a piece a word."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import run_chimera

WORDS = 5_000


def long_answer_session(home: Path, workdir: Path) -> str:
    answer = "".join(f"word{n} " for n in range(WORDS))
    with SessionStore.create(home, "long", workdir=workdir, model="m") as store:
        store.add("user", {"role": "user", "content": "say a lot"})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": answer}]})
        store.sync()
    return answer


def test_a_long_answer_replayed_at_once_comes_in_few_pieces(isolated_env: Path, project: Path) -> None:
    """`chimera replay --json` of a 5,000-word answer: the whole text, in pieces of at most 4 KB, not one a word."""
    answer = long_answer_session(isolated_env, project)
    proc = run_chimera("replay", "long", "--json")
    assert proc.returncode == 0, proc.stderr
    deltas = [e["text"] for e in map(json.loads, proc.stdout.splitlines()) if e["type"] == "text_delta"]
    assert "".join(deltas) == answer
    assert len(deltas) <= len(answer) // 4096 + 2
    assert all(len(piece) <= 4096 for piece in deltas)
