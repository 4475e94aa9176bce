"""Sessions in bulk for the catalog and the picker: written by hand as Chimera leaves them (a header, a task,
an answer, an event log saying how the run ended) with their lines in the session catalog."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from chimera.core.sessions.catalog import note
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.session_helpers import node, record

__all__ = ["catalogued_sessions", "write_session"]


def write_session(
    home: Path, session_id: str, workdir: str, title: str, *, updated: float, answers: int = 1, ending: str = "finished"
) -> int:
    """A session folder holding ``title`` as its task and ``answers`` answers; its entries' size."""
    folder = home / "sessions" / session_id
    folder.mkdir(parents=True, mode=0o700)
    lines = [record(t="meta", session_id=session_id, workdir=workdir, model=MODEL, created=updated - 60)]
    lines.append(node("u1", None, "user", title))
    parent = "u1"
    for n in range(answers):
        lines.append(node(f"a{n}", parent, "assistant", [{"type": "text", "text": f"answer {n}"}], role="assistant"))
        parent = f"a{n}"
    (folder / "entries.jsonl").write_bytes(b"".join(lines))
    os.utime(folder / "entries.jsonl", (updated, updated))  # last changed when it says
    success = ending == "finished"
    reason = "completed" if success else "max_turns"
    end = {"type": "run_finished", "success": success, "reason": reason, "steps": answers, "cost": 0.0, "error": ""}
    (folder / "events.jsonl").write_text(json.dumps(end) + "\n")
    return len(b"".join(lines))


def catalogued_sessions(home: Path, count: int, workdir: str, *, now: float | None = None) -> list[str]:
    """``count`` sessions (task ``task N``, one answer, finished), a minute apart, each with its catalog line as
    a closing store leaves it; their ids, newest first."""
    now = time.time() if now is None else now
    ids = []
    for n in range(count):
        session_id = f"{n:05d}aa"
        updated = now - 60 * (count - n)
        size = write_session(home, session_id, workdir, f"task {n}", updated=updated)
        fields = {"title": f"task {n}", "workdir": workdir, "created": updated - 60, "updated": updated}
        note(home, session_id, {**fields, "active_turns": 1, "size": size, "ending": {"state": "finished", "why": ""}})
        ids.append(session_id)
    return ids[::-1]
