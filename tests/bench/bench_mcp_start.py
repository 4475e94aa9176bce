"""Benchmark: three MCP servers started together (``McpServers.ready``) vs the slowest of them alone.

Run by hand: `python tests/bench/bench_mcp_start.py [rounds]` (8 rounds by default; the reference server needs npm,
and is installed on first use as the tests install it).

Two sets of three servers, each timed from ``ready`` called to every server ready (started, its handshake done, its
tools listed), the SDK already loaded (the first start of a process also loads it, on a thread: printed apart):
- servers whose start-up cost is known: ``mcp_slow_server.py`` waits 0.5, 1.0 and 1.5 s before it answers, as a
  server that connects to its database first would. Together vs the 1.5 s one alone is what starting in parallel
  costs beyond the wait itself (the goal is 1.2x at most); one after another is shown beside them.
- three copies of the reference server (``mcp-server-everything``, Node.js), whose start is mostly CPU: on a machine
  of few cores three starts share them, so beside Chimera's two ways the same three are started bare (the
  processes started and the handshake and ``tools/list`` written by hand, no SDK), together and alone: the ratio
  the servers themselves allow here. The servers' CPU a start is printed too (the children's rusage once stopped).

Rounds rotate the order of the three ways, so a machine busy with other work weighs on each alike. Medians.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from asyncio.subprocess import DEVNULL, PIPE
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers
from tests.mcp_helpers import everything_server

SLOW_SERVER = Path(__file__).with_name("mcp_slow_server.py")
WAITS = (0.5, 1.0, 1.5)  # seconds each known-cost server waits before it answers
GOAL = 1.2


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def _ready(configs: Sequence[ServerConfig], folder: Path) -> tuple[float, float]:
    """Seconds from ``ready`` called to every server of ``configs`` ready, and the CPU seconds the servers used from
    their start to their stop (they are stopped, and reaped, before this returns)."""
    cpu = _children_cpu()
    servers = McpServers(configs, folder, folder, ())
    start = time.perf_counter()
    try:
        await servers.ready()
        took = time.perf_counter() - start
        if servers.counts != (len(configs), len(configs)):
            raise SystemExit(f"bench: a server did not start: {'; '.join(servers.notices)}")
    finally:
        await servers.stop()
    return took, _children_cpu() - cpu


async def _one_after_another(configs: Sequence[ServerConfig], folder: Path) -> tuple[float, float]:
    took = [await _ready([config], folder) for config in configs]
    return sum(t for t, _ in took), sum(c for _, c in took)


Way = Callable[[], Awaitable[tuple[float, float]]]


async def _measure(ways: dict[str, Way], rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Each way, ``rounds`` times, the order rotating: (seconds, servers' CPU seconds) per round."""
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    names = list(ways)
    for run in range(rounds):
        for name in names[run % len(names) :] + names[: run % len(names)]:
            figures[name].append(await ways[name]())
    return figures


def _ways(configs: Sequence[ServerConfig], slowest: ServerConfig, folder: Path) -> dict[str, Way]:
    return {
        "together": lambda: _ready(configs, folder),
        "the slowest alone": lambda: _ready([slowest], folder),
        "one after another": lambda: _one_after_another(configs, folder),
    }


async def _bare(commands: Sequence[str]) -> tuple[float, float]:
    """``_ready`` without Chimera or the SDK: each command started (asyncio), the handshake and ``tools/list`` written
    and read by hand, all at once; then stdin closed and each waited for."""
    cpu = _children_cpu()
    start = time.perf_counter()
    processes = [
        await asyncio.create_subprocess_exec(
            command, stdin=PIPE, stdout=PIPE, stderr=DEVNULL, env={"PATH": os.environ["PATH"]}
        )
        for command in commands
    ]
    await asyncio.gather(*(_listed(process) for process in processes))
    took = time.perf_counter() - start
    await asyncio.gather(*(_ended(process) for process in processes))
    return took, _children_cpu() - cpu


async def _ended(process: asyncio.subprocess.Process) -> None:
    """``process`` ended as the SDK ends a server: stdin closed, then, if it is still there after 2 s, TERM."""
    assert process.stdin is not None
    process.stdin.close()
    try:
        await asyncio.wait_for(process.wait(), 2)
    except TimeoutError:
        process.terminate()
        await process.wait()


async def _listed(process: asyncio.subprocess.Process) -> None:
    """The handshake and a ``tools/list``, written to ``process`` and its replies read."""
    assert process.stdin is not None
    assert process.stdout is not None
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
    for message in (
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
    ):
        process.stdin.write(json.dumps(message).encode() + b"\n")
    while True:
        line = await process.stdout.readline()
        if not line:
            raise SystemExit("bench: a server ended before it listed its tools")
        if json.loads(line).get("id") == 2:
            return


def _report(title: str, figures: dict[str, list[tuple[float, float]]]) -> None:
    """Print one set's medians and its ratios, together / alone."""
    print(f"  {title}:")
    median = {name: statistics.median(t for t, _ in pairs) for name, pairs in figures.items()}
    for name, pairs in figures.items():
        times = [t for t, _ in pairs]
        print(f"    {name:26} {median[name]:5.2f} s  ({min(times):.2f}-{max(times):.2f} s)")
    ratio = median["together"] / median["the slowest alone"]
    print(f"    together / the slowest alone {ratio:5.2f}x (goal {GOAL}x at most)")
    if "bare, together" in median:
        bare = median["bare, together"] / median["bare, alone"]
        print(f"    bare, together / alone       {bare:5.2f}x (the servers themselves, no Chimera, no SDK)")


async def main_async(rounds: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        slow = [
            ServerConfig(name=f"wait-{w:g}", origin="bench", command=sys.executable, args=(str(SLOW_SERVER), str(w)))
            for w in WAITS
        ]
        everything = str(everything_server())
        copies = [ServerConfig(name=f"everything-{n}", origin="bench", command=everything) for n in range(1, 4)]
        cold, _ = await _ready(slow[:1], folder)  # the SDK's imports, once a process, on a thread
        print(f"first start of the process (the {WAITS[0]:g} s server; the SDK loaded on a thread): {cold:.2f} s")
        await _ready(copies, folder)  # unmeasured: the disk cache warm for Node.js and the server's modules
        print(f"three MCP servers started, median of {rounds} rounds, the ways interleaved:")
        waits = ", ".join(f"{w:g}" for w in WAITS)
        _report(f"known start-up costs {waits} s (a wait each)", await _measure(_ways(slow, slow[-1], folder), rounds))
        ways = _ways(copies, copies[0], folder)
        ways["bare, together"] = lambda: _bare([everything] * 3)
        ways["bare, alone"] = lambda: _bare([everything])
        figures = await _measure(ways, rounds)
        _report("the reference server (mcp-server-everything, Node.js), three copies", figures)
        cpu = statistics.median(c for _, c in figures["the slowest alone"])
        cores = len(os.sched_getaffinity(0))
        print(f"    its CPU: {cpu:.2f} s a start (to its stop); three starts share {cores} cores with the host's work")


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    asyncio.run(main_async(rounds))


if __name__ == "__main__":
    main()
