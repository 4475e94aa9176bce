"""Benchmark: `chimera acp` from spawn to its `initialize` answer, and to the first `agent_message_chunk` of a
turn (a new session, then a prompt), against the loopback Messages API; the ACP SDK's import alone; and, while a
reply streams at 100 text deltas a second, the updates a client receives a second and the agent's CPU.

Run by hand: `python tests/bench/bench_acp.py [runs]`. Prints medians in milliseconds, and the ratio to a bare
`python -c pass` (ratios travel between machines; milliseconds do not).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from acp import PROTOCOL_VERSION, connect_to_agent, text_block

from tests.fake_anthropic import FakeAnthropic, message, paced, text


class _Client:
    def __init__(self) -> None:
        self.first_chunk = asyncio.Event()
        self.chunks = 0

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if update.session_update == "agent_message_chunk":
            self.chunks += 1
            self.first_chunk.set()


def _cpu_seconds(pid: int) -> float:
    """The CPU time (user and system) process ``pid`` has used so far (Linux's /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _streaming(env: dict[str, str], folder: str, api: FakeAnthropic) -> tuple[float, float, float]:
    """A reply of 400 deltas at 100 a second: the updates a second the client got, and the agent's CPU share."""
    begun, sent = threading.Event(), threading.Event()
    api.script(paced(message(text("x" * 400, pieces=400)), 0.01, begun, sent))
    chimera = str(Path(sys.executable).with_name("chimera"))
    proc = await asyncio.create_subprocess_exec(
        chimera, "acp", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    client = _Client()
    conn = connect_to_agent(client, proc.stdin, proc.stdout)  # type: ignore[arg-type]
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    session = await conn.new_session(cwd=folder, mcp_servers=[])
    turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("stream")]))
    await asyncio.to_thread(begun.wait)
    cpu, start = _cpu_seconds(proc.pid), time.perf_counter()
    await turn
    wall, used = time.perf_counter() - start, _cpu_seconds(proc.pid) - cpu
    proc.stdin.close()
    await proc.wait()
    await conn.close()
    return client.chunks / wall, used / wall, wall


async def _once(env: dict[str, str], folder: str) -> tuple[float, float]:
    start = time.perf_counter()
    chimera = str(Path(sys.executable).with_name("chimera"))
    proc = await asyncio.create_subprocess_exec(
        chimera, "acp", stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    client = _Client()
    conn = connect_to_agent(client, proc.stdin, proc.stdout)  # type: ignore[arg-type]
    await conn.initialize(protocol_version=PROTOCOL_VERSION)
    initialized = time.perf_counter() - start
    session = await conn.new_session(cwd=folder, mcp_servers=[])
    turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=[text_block("hello")]))
    await client.first_chunk.wait()
    chunk = time.perf_counter() - start
    await turn
    proc.stdin.close()
    await proc.wait()
    await conn.close()
    return initialized, chunk


def _bare_ms(runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    bare = _bare_ms(runs)
    sdk = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import acp, acp.schema"], check=True)
        sdk.append((time.perf_counter() - start) * 1000)
    with FakeAnthropic() as api:
        api.fallback = message(text("Hello."))
        env = {
            **os.environ,
            "CHIMERA_HOME": tempfile.mkdtemp(prefix="chimera-bench-"),
            "ANTHROPIC_BASE_URL": api.url,
            "ANTHROPIC_API_KEY": "bench-key",
            "NO_PROXY": "127.0.0.1",
        }
        folder = tempfile.mkdtemp(prefix="chimera-bench-ws-")
        results = [asyncio.run(_once(env, folder)) for _ in range(runs)]
        api.fallback = None
        per_second, share, wall = asyncio.run(_streaming(env, folder, api))
    imported = statistics.median(sdk)
    initialize = statistics.median(r[0] for r in results) * 1000
    chunk = statistics.median(r[1] for r in results) * 1000
    print(f"runs: {runs} (median)")
    print(f"python -c pass                      {bare:8.0f} ms")
    print(f"import acp (the SDK)                {imported:8.0f} ms   ({imported / bare:.1f}x)")
    print(f"chimera acp: spawn to initialize    {initialize:8.0f} ms   ({initialize / bare:.1f}x)")
    print(f"chimera acp: spawn to first chunk   {chunk:8.0f} ms   ({chunk / bare:.1f}x)")
    print(f"400 deltas at 100/s: {per_second:.0f} updates/s for {wall:.1f} s, the agent at {share:.0%} of a core")


if __name__ == "__main__":
    main()
