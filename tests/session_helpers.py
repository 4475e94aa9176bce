"""Sessions made for tests: records spelled by hand, a sound start, a finished session with a fixed history,
and a headless run killed when a chosen event arrives.

``record`` and ``node`` spell entries.jsonl lines as Chimera writes them; ``sound_start`` writes a session (u1,
a1) that crafted lines can follow. ``record_fixed_session`` writes a finished session (thinking, a read, a failing
test run with its whole output saved, an edit with its diff, the answer, and an event log with their durations)
for the workbench's snapshots and replays. ``start_run`` and ``kill_when`` run ``chimera run --json`` and SIGKILL
it when an event arrives.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera_command
from tests.fake_anthropic import DEFAULT_MODEL as MODEL

__all__ = ["SNAP", "kill_when", "node", "record", "record_fixed_session", "sound_start", "start_run"]

SNAP = "ab" * 20


# --- records spelled by hand ------------------------------------------------------------------


def record(**fields: object) -> bytes:
    """One line of a session's entries.jsonl: ``fields`` as compact JSON."""
    return json.dumps(fields, separators=(",", ":")).encode() + b"\n"


def node(node_id: object, parent: object, kind: str, content: object, role: str = "user") -> bytes:
    """A node record: ``role`` saying ``content``, under ``parent``."""
    return record(t="node", id=node_id, parent=parent, kind=kind, ts=1.0, message={"role": role, "content": content})


def sound_start(home: Path, session_id: str, workdir: Path) -> None:
    """A session as Chimera writes it: the person said hello, the model said hi (node ids u1, a1)."""
    with SessionStore.create(home, session_id, workdir=workdir, model=MODEL) as store:
        entries = store.folder / "entries.jsonl"
    with entries.open("ab") as fh:
        fh.write(node("u1", None, "user", "hello"))
        fh.write(node("a1", "u1", "assistant", [{"type": "text", "text": "hi"}], role="assistant"))


# --- a finished session with a fixed history --------------------------------------------------

STATS = "".join(
    f"{n:6d}\t{line}\n"
    for n, line in enumerate(
        [
            "def median(values):",
            "    ordered = sorted(values)",
            "    mid = len(ordered) // 2",
            "    return ordered[mid]",
        ],
        start=1,
    )
)
FAILURE = "F.\nFAILED test_stats.py::test_median_even - assert 3 == 2.5\n1 failed, 1 passed"

DIFF = (
    "--- a/stats.py\n+++ b/stats.py\n@@ -3,2 +3,4 @@\n     mid = len(ordered) // 2\n"
    "-    return ordered[mid]\n+    if len(ordered) % 2:\n+        return ordered[mid]\n"
    "+    return (ordered[mid - 1] + ordered[mid]) / 2\n"
)


def _assistant(*blocks: dict[str, Any]) -> dict[str, Any]:
    """An assistant message of ``blocks``."""
    return {"role": "assistant", "content": list(blocks)}


def _result(call_id: str, output: str, *, error: bool = False) -> dict[str, Any]:
    """A tool_result block."""
    return {"type": "tool_result", "tool_use_id": call_id, "content": output, "is_error": error}


def _use(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A tool_use block."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": args}


def record_fixed_session(home: Path, workdir: Path) -> str:
    """A finished session with thinking, a read, a failing test run (its whole output saved), an edit with its
    diff and an answer."""
    saved = str(home / "output" / "s1" / "b1.txt")
    calls: list[tuple[str, str, dict[str, Any], str, bool, float, dict[str, Any]]] = [
        ("r1", "read", {"path": "stats.py"}, STATS, False, 3.0, {}),
        ("b1", "bash", {"command": "pytest -q"}, FAILURE, True, 840.0, {"exit_code": 1, "full_output": saved}),
        (
            "e1",
            "edit",
            {"path": "stats.py", "old": "return ordered[mid]", "new": "…"},
            "Edited stats.py",
            False,
            12.0,
            {"diff": DIFF},
        ),
    ]
    with SessionStore.create(home, "s1", workdir=workdir, model=MODEL) as store:
        store.add("user", {"role": "user", "content": "fix the median of an even list"})
        first = store.add(
            "assistant",
            _assistant(
                {"type": "thinking", "thinking": "The median must average the middle pair.", "signature": "x"},
                {"type": "text", "text": "I'll read the code and run the tests."},
                _use(*calls[0][:3]),
                _use(*calls[1][:3]),
            ),
        )
        store.add(
            "tool_result", {"role": "user", "content": [_result("r1", STATS), _result("b1", FAILURE, error=True)]}
        )
        second = store.add(
            "assistant", _assistant({"type": "text", "text": "`median` returns one value."}, _use(*calls[2][:3]))
        )
        store.add("tool_result", {"role": "user", "content": [_result("e1", "Edited stats.py")]})
        end = store.add(
            "assistant", _assistant({"type": "text", "text": "Fixed: an even list averages its **two** middle values."})
        )
        store.sync()
        asked = {"r1": first.id, "b1": first.id, "e1": second.id}  # a call's event carries the node that asked
        log = [
            {
                "type": "tool_call_finished",
                "node_id": asked[c],
                "call_id": c,
                "name": n,
                "args": a,
                "output": o,
                "is_error": e,
                "duration_ms": d,
                "data": data,
            }
            for c, n, a, o, e, d, data in calls
        ]
        log.append(
            {
                "type": "run_finished",
                "node_id": end.id,
                "success": True,
                "reason": "completed",
                "steps": 3,
                "cost": 0.0123,
                "error": "",
                "answer": "",
            }
        )
        Path(saved).parent.mkdir(parents=True, exist_ok=True)
        Path(saved).write_text("".join(f"collecting test_stats.py line {n}\n" for n in range(1, 41)) + FAILURE)
        (store.folder / "events.jsonl").write_text("".join(json.dumps(line) + "\n" for line in log))
    return "s1"


# --- a headless run killed at an event --------------------------------------------------------


def start_run(model_env: dict[str, str], workdir: Path, *extra: str) -> subprocess.Popen[str]:
    """`chimera run go --json` in ``workdir``, every call allowed, against the model ``model_env`` points at."""
    return subprocess.Popen(
        [*chimera_command(), "run", "go", "--json", "--workdir", str(workdir), "--permission-mode", "bypass", *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env},
    )


def kill_when(proc: subprocess.Popen[str], predicate: Callable[[dict[str, Any]], bool]) -> list[dict[str, Any]]:
    """Read events until ``predicate(event)`` holds, then SIGKILL the process."""
    assert proc.stdout is not None
    seen = []
    for line in proc.stdout:
        event = json.loads(line)
        seen.append(event)
        if predicate(event):
            break
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    assert proc.returncode == -signal.SIGKILL
    return seen
