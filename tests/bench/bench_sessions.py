"""Benchmark: a session of 10,000 entries: open it, compute the active path, switch branches, append.

Run by hand: `python tests/bench/bench_sessions.py [entries]`. Targets from the
issue: open under 300 ms, switch under 50 ms. Messages are a realistic mix:
short prompts, 1-2 KB answers with a tool call, 2-8 KB tool results.
"""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from chimera.core.sessions.reading import model_context
from chimera.core.sessions.store import SessionStore


def _build(home: Path, count: int, name: str = "bench") -> tuple[str, str]:
    """A session of ``count`` nodes: one long line of turns with a branch near the end. Returns two leaves.

    Durability as in a run: every record written and flushed, an fsync at each turn
    boundary (after a turn's tool results).
    """
    rng = random.Random(7)
    with SessionStore.create(home, name, workdir=home, model="claude-sonnet-4-6") as store:
        store.add("user", {"role": "user", "content": "Refactor the parser and keep the tests green."})
        kinds = ("assistant", "tool_result")
        branch_at = ""
        for i in range(count - 3):
            kind = kinds[i % 2]
            if kind == "assistant":
                text = "I will look at the next module. " * rng.randint(30, 60)
                message = {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": text},
                        {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"src/m{i}.py"}},
                    ],
                }
            else:
                output = "".join(f"{n:>6}\tcode line {n} of module {i}\n" for n in range(rng.randint(80, 300)))
                message = {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": output, "is_error": False}
                    ],
                }
            node = store.add(kind, message, sync=kind == "tool_result")
            if i == count - 40:
                branch_at = node.id
        first = store.add("user", {"role": "user", "content": "one way"}).id
        second = store.add("user", {"role": "user", "content": "another way"}, parent=branch_at).id
    return first, second


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        start = time.perf_counter()
        first, second = _build(home, count)
        built = time.perf_counter() - start
        size = (home / "sessions" / "bench" / "entries.jsonl").stat().st_size / 1e6
        opens, paths, switches = [], [], []
        for _ in range(5):
            t0 = time.perf_counter()
            store = SessionStore.open(home, "bench")
            t1 = time.perf_counter()
            messages = model_context(store.tree).messages
            t2 = time.perf_counter()
            for leaf in (first, second, first):
                t = time.perf_counter()
                store.move_leaf(leaf)
                model_context(store.tree)
                switches.append(time.perf_counter() - t)
            store.close()
            opens.append(t1 - t0)
            paths.append(t2 - t1)
        print(f"session: {count:,} entries, {size:.1f} MB on disk")
        print(f"append (write a record, fsync a turn)  {count / built:10,.0f} entries/s while building")
        print(f"open (read, parse, set aside torn)     {statistics.median(opens) * 1000:8.1f} ms   (target 300)")
        print(f"active path -> {len(messages):,} messages      {statistics.median(paths) * 1000:8.1f} ms")
        print(f"switch leaf (recorded, fsynced) + path {statistics.median(switches) * 1000:8.1f} ms   (target 50)")


if __name__ == "__main__":
    main()
