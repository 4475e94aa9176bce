"""Benchmark: `chimera compare` with three variants against the loopback server, paced replies.

Run by hand: `python tests/bench/bench_compare.py [--pace SECONDS] [--rounds N]`.

A session is recorded once (one task that writes a file). Then, each in a fresh
process of its own so that its peak memory is its own: the slowest variant
alone, and the three variants side by side (two, three and four turns; every
reply streamed at ``--pace`` seconds an event, as a model streams). Prints the
wall time of each, their ratio (the target is at most 1.3: the variants run
side by side, so three cost about what the slowest costs), and the peak RSS of
each process and what three variants take beyond one.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.compare import Comparison, parse_specs, session_policy
from chimera.core.home import chimera_home
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, paced, text, tool_use

TURNS = {"v1": 2, "v2": 3, "v3": 4}  # the variants' models, and the turns each takes


def _replies(model: str, turns: int, pace: float) -> list[Reply]:
    def slow(reply: Reply) -> Reply:
        return paced(reply, pace, threading.Event(), threading.Event())

    writes = [
        slow(
            message(
                tool_use(f"w{n}", "write", {"path": f"{model}-{n}.txt", "content": f"step {n}\n" * 50}),
                stop_reason="tool_use",
                model=model,
            )
        )
        for n in range(1, turns)
    ]
    return [*writes, slow(message(text(f"{model} is done."), model=model))]


async def _record(workdir: Path) -> str:
    (workdir / "main.py").write_text("print('hello')\n" * 200)
    session = start_session(RunOptions(workdir=workdir, permission_mode="bypass"))
    try:
        await session.run("write the notes")
        return session.id
    finally:
        await session.close()


async def _compare(session_id: str, models: list[str]) -> float:
    home = chimera_home()
    with SessionStore.open(home, session_id) as store:
        first = next(n.id for n in store.tree.nodes.values() if n.kind == "user")
        specs = parse_specs([f"model={m}" for m in models])
        comparison = Comparison(store, first, specs, policy=session_policy(store, home))
        started = time.perf_counter()
        rows = await comparison.run()
        elapsed = time.perf_counter() - started
    if not all(row.success for row in rows):
        raise SystemExit(f"a variant failed: {[row.to_json() for row in rows]}")
    return elapsed


def _child(session_id: str, models: list[str]) -> None:
    """One measurement in this process: the wall time, then the peak RSS (KiB), as one JSON line."""
    seconds = asyncio.run(_compare(session_id, models))
    print(json.dumps({"seconds": seconds, "rss_kib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))


def _measure(
    api: FakeAnthropic, env: dict[str, str], session_id: str, models: list[str], pace: float
) -> dict[str, float]:
    api.responder = by_model({m: _replies(m, TURNS[m], pace) for m in models})
    proc = subprocess.run(
        [sys.executable, __file__, "--child", session_id, *models],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        check=False,
    )
    if proc.returncode != 0:
        raise SystemExit(proc.stderr)
    return dict(json.loads(proc.stdout.splitlines()[-1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pace", type=float, default=0.05, help="seconds between a reply's streamed events")
    parser.add_argument("--rounds", type=int, default=3, help="measurements of each (the best is kept)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], args.child[1:])
        return
    with tempfile.TemporaryDirectory(prefix="bench-compare-") as scratch, FakeAnthropic() as api:
        home, workdir = Path(scratch, "home"), Path(scratch, "work")
        workdir.mkdir()
        env = {
            "CHIMERA_HOME": str(home),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "k",
            "CHIMERA_MODEL": "v0",
        }
        os.environ.update(env)
        api.script(
            message(tool_use("w", "write", {"path": "notes.txt", "content": "notes\n"}), stop_reason="tool_use"),
            message(text("Wrote the notes.")),
        )
        session_id = asyncio.run(_record(workdir))
        alone = [_measure(api, env, session_id, ["v3"], args.pace) for _ in range(args.rounds)]
        three = [_measure(api, env, session_id, ["v1", "v2", "v3"], args.pace) for _ in range(args.rounds)]
    best_alone = min(m["seconds"] for m in alone)
    best_three = min(m["seconds"] for m in three)
    rss_alone = min(m["rss_kib"] for m in alone) / 1024
    rss_three = min(m["rss_kib"] for m in three) / 1024
    slowest = f"slowest variant alone ({TURNS['v3']} turns, pace {args.pace}s)"
    print(f"{slowest}: {best_alone:.2f} s, peak RSS {rss_alone:.0f} MiB")
    print(f"three variants side by side: {best_three:.2f} s, peak RSS {rss_three:.0f} MiB")
    print(f"wall time ratio: {best_three / best_alone:.2f}x (target <= 1.3)")
    print(f"memory beyond one run: {rss_three - rss_alone:.1f} MiB")


if __name__ == "__main__":
    main()
