"""Sessions with branches for the tree's tests: written through the store, as Chimera records them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chimera.core.sessions.store import SessionStore

__all__ = ["BRANCHED", "branched_session", "nested_session", "said", "wide_session"]

MODEL = "claude-sonnet-4-5"


def said(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def answered(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


def called(call_id: str) -> dict[str, Any]:
    call = {"type": "tool_use", "id": call_id, "name": "bash", "input": {"command": "ls"}}
    return {"role": "assistant", "content": [call]}


def result(call_id: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": "a.txt"}]}


BRANCHED = ("fix the bug", "Fixed it.", "now add tests", "Added tests.", "try another way", "Done differently.")


def branched_session(home: Path, workdir: Path, session_id: str = "s1") -> dict[str, str]:
    """A session of two turns and a branch: "fix the bug" (a call, its result, "Fixed it.", named ``stable``),
    then "now add tests" ("Added tests.") and, branched beside it and active, "try another way" ("Done
    differently."). The node ids by name: ``u1 c1 r1 a1 u2 a2 u3 a3``."""
    ids: dict[str, str] = {}
    with SessionStore.create(home, session_id, workdir=workdir, model=MODEL) as store:
        ids["u1"] = store.add("user", said("fix the bug"), sync=True).id
        ids["c1"] = store.add("assistant", called("t1"), sync=True).id
        ids["r1"] = store.add("tool_result", result("t1"), sync=True).id
        ids["a1"] = store.add("assistant", answered("Fixed it.\nIt was a typo."), sync=True).id
        store.label(ids["a1"], "stable")
        ids["u2"] = store.add("user", said("now add tests"), sync=True).id
        ids["a2"] = store.add("assistant", answered("Added tests."), sync=True).id
        ids["u3"] = store.add("user", said("try another way"), parent=ids["a1"], sync=True).id
        ids["a3"] = store.add("assistant", answered("Done differently."), sync=True).id
    return ids


def wide_session(home: Path, workdir: Path, *, entries: int, branches: int, session_id: str = "big") -> str:
    """A session of about ``entries`` messages: turns of a prompt, a call, its result and an answer, with
    ``branches`` branch points spread along it (each a turn asked again beside the first)."""
    with SessionStore.create(home, session_id, workdir=workdir, model=MODEL) as store:
        turns = max(1, entries // 4)
        every = max(1, turns // max(1, branches))
        for turn in range(turns):
            start = store.tree.leaf
            store.add("user", said(f"task number {turn}"))
            store.add("assistant", called(f"t{turn}"))
            store.add("tool_result", result(f"t{turn}"))
            store.add("assistant", answered(f"Answer number {turn}."))
            if turn % every == every - 1 and start is not None:
                kept = store.tree.leaf
                store.add("user", said(f"again {turn}"), parent=start)
                store.add("assistant", answered(f"Another answer {turn}."))
                store.move_leaf(kept)
        store.sync()
    return session_id


def nested_session(home: Path, workdir: Path, *, levels: int, session_id: str = "deep") -> str:
    """A session of ``2 * levels - 1`` prompts whose branches nest ``levels - 1`` deep: each prompt after the
    first is asked twice from the one before ("first ask N", then "task N"), and the second is asked from
    again, so every branch point's active branch holds the next one. The leaf is the last task."""
    with SessionStore.create(home, session_id, workdir=workdir, model=MODEL) as store:
        point = store.add("user", said("task 0")).id
        for level in range(1, levels):
            store.add("user", said(f"first ask {level}"), parent=point)
            point = store.add("user", said(f"task {level}"), parent=point).id
        store.sync()
    return session_id
