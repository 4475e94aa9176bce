"""Benchmark: the readers of a stored session stay linear (issue 16, item 13).

Run by hand: `python tests/bench/bench_readers.py` (about two minutes on two cores). Prints:

- `chimera tree ID --json` on sessions of 10,000 and 40,000 nodes: the whole process, from
  outside (median of three), and the ratio of the two (4.0 is linear); once with short messages
  (~150 bytes a node), once with long ones (~4.5 KB a node: answers of a few hundred words, reads
  of 80 to 300 lines), where decoding every message to summarize it is most of the time;
- one answer of 50,000 words in the workbench (headless, under Pilot): streamed live from the
  loopback Messages API server a word a delta, then the same session replayed at *instant*,
  each from the task to the run's end on screen, and their ratio (replay / live).
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.providers.pace import INSTANT
from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.store import SessionStore
from chimera.tui.app import build_app
from chimera.tui.replay_app import ReplayApp
from tests.bench.bench_sessions import _build
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text

WORDS = int(os.environ.get("BENCH_WORDS", "50000"))
SIZE = (120, 40)


def _build_short(home: Path, count: int, name: str) -> None:
    """A session of ``count`` short nodes: a prompt, then a read and its result, again and again."""
    with SessionStore.create(home, name, workdir=home, model="claude-sonnet-4-6") as store:
        store.add("user", {"role": "user", "content": "Look through the modules."})
        for i in range(count - 1):
            if i % 2 == 0:
                use = {"type": "tool_use", "id": f"t{i}", "name": "read", "input": {"path": f"m{i}.py"}}
                store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": "Next."}, use]})
            else:
                result = {"type": "tool_result", "tool_use_id": f"t{i - 1}", "content": "x = 1\n", "is_error": False}
                store.add("tool_result", {"role": "user", "content": [result]}, sync=True)


def tree_seconds(home: Path, count: int, *, short: bool) -> float:
    """The median wall time of `chimera tree ID --json` over a session of ``count`` nodes."""
    name = f"tree{count}{'short' if short else 'long'}"
    (_build_short if short else _build)(home, count, name)
    env = {**os.environ, "CHIMERA_HOME": str(home)}
    times = []
    for _ in range(3):
        started = time.perf_counter()
        proc = subprocess.run([*chimera_command(), "tree", name, "--json"], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
        assert len(json.loads(proc.stdout)["nodes"]) == count
    return statistics.median(times)


def answer() -> str:
    return "".join(f"word{n % 97} " if n % 40 else "done.\n\n" for n in range(1, WORDS + 1))


async def live(home: Path, workdir: Path) -> tuple[float, str]:
    """Seconds from the task to its run's end on screen, the answer streamed a word a delta; the session's id."""
    with FakeAnthropic() as api:
        api.script(message(text(answer(), pieces=WORDS)))
        os.environ.update(ANTHROPIC_BASE_URL=api.url, ANTHROPIC_API_KEY="k", CHIMERA_MODEL="claude-sonnet-4-6")
        app = build_app(RunOptions(workdir=workdir))
        async with app.run_test(size=SIZE) as pilot:
            await pilot.click("#prompt")
            await pilot.press(*"say it", "enter")
            started = time.perf_counter()
            while not any(e.kind == "notice" and "done" in e.text for e in app.transcript.entries):
                await pilot.pause(0.01)
            took = time.perf_counter() - started
            session_id = app.session.id
    return took, session_id


async def replayed(session_id: str) -> float:
    """Seconds from pressing play at *instant* to the replay's end on screen."""
    app = ReplayApp(session_id, paused=True)
    async with app.run_test(size=SIZE) as pilot:
        while not app.transcript.entries:
            await pilot.pause(0.01)
        app.clock.speed = INSTANT
        started = time.perf_counter()
        await pilot.press("p")
        while not app.ended:
            await pilot.pause(0.01)
        return time.perf_counter() - started


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        os.environ["CHIMERA_HOME"] = str(home)
        for short in (True, False):
            small, large = tree_seconds(home, 10_000, short=short), tree_seconds(home, 40_000, short=short)
            print(
                f"chimera tree --json, {'short' if short else 'long'} messages: 10,000 nodes {small:.2f} s, "
                f"40,000 nodes {large:.2f} s ({large / small:.1f}×)"
            )
        workdir = Path(scratch) / "work"
        workdir.mkdir()
        took_live, session_id = asyncio.run(live(home, workdir))
        took_replay = asyncio.run(replayed(session_id))
        print(
            f"a {WORDS:,}-word answer in the workbench: live {took_live:.1f} s, "
            f"replayed at instant {took_replay:.1f} s ({took_replay / took_live:.2f}× live)"
        )


if __name__ == "__main__":
    main()
