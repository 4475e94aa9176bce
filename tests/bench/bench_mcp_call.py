"""Benchmark: what a call of an MCP tool costs through Chimera over the SDK's own ``call_tool``.

Run by hand: `python tests/bench/bench_mcp_call.py [calls]` (1,000 of each by default; the reference server needs
npm, and is installed on first use as the tests install it).

The reference server's ``echo`` over stdio, called three ways, one call of each in turn (the order rotating), so a
machine busy with other work weighs on each alike:
- the SDK's client (``mcp.Client``, the handshake mode and no cache, as Chimera makes it): ``call_tool``;
- Chimera's ``Connection.call``: the same call, with its ``tool_timeout`` and the result read into text;
- Chimera's ``McpTool.run``, as the executor runs it: the above, then the output's cap and masking (``OutputSink``).
Each client has a process of the server of its own (a stdio server serves one client). Prints the median and 90th
percentile of each, in milliseconds from the call to its result, the CPU a call in this process, and Chimera's
overhead over the SDK (the goal is 5 ms at most).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TextIO

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.servers import McpServers
from chimera.core.tools.base import ToolContext
from tests.mcp_helpers import everything_server

MESSAGE = {"message": "hello from the bench"}
WARM = 50  # calls of each way first, unmeasured
GOAL_MS = 5.0

Call = Callable[[], Awaitable[Any]]


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


async def _measure(ways: dict[str, Call], calls: int) -> dict[str, list[tuple[float, float]]]:
    """Each way ``calls`` times, one call of each in turn: (milliseconds, CPU milliseconds of this process) a call."""
    for _ in range(WARM):
        for call in ways.values():
            await call()
    figures: dict[str, list[tuple[float, float]]] = {name: [] for name in ways}
    names = list(ways)
    for run in range(calls):
        for name in names[run % len(names) :] + names[: run % len(names)]:
            cpu, start = time.process_time(), time.perf_counter()
            await ways[name]()
            figures[name].append(((time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000))
    return figures


async def main_async(calls: int, quiet: TextIO) -> None:
    """The three ways measured and printed; the SDK client's server writes its stderr to ``quiet``."""
    from mcp import Client  # the SDK, as Connection loads it
    from mcp.client.stdio import StdioServerParameters, stdio_client

    command = str(everything_server())
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        (folder / "spill").mkdir()
        servers = McpServers([ServerConfig(name="e", origin="bench", command=command)], folder, folder, ())
        try:
            await servers.ready()
            if servers.notices:
                raise SystemExit(f"bench: {'; '.join(servers.notices)}")
            tool = next(t for t in servers.every_tool if t.tool.name == "echo")
            ctx = ToolContext(workspace=folder, spill_dir=folder / "spill")
            transport = stdio_client(StdioServerParameters(command=command), errlog=quiet)
            async with Client(transport, mode="legacy", cache=None) as client:
                answer = await client.call_tool("echo", MESSAGE)
                ours = await tool.run(MESSAGE, ctx)
                if answer.is_error or ours.is_error or ours.output != answer.content[0].text:  # type: ignore[union-attr]
                    raise SystemExit(f"bench: the two answers differ: {answer.content!r} vs {ours.output!r}")
                figures = await _measure(
                    {
                        "the SDK's call_tool": lambda: client.call_tool("echo", MESSAGE),
                        "Connection.call": lambda: tool.connection.call("echo", MESSAGE, None),
                        "McpTool.run": lambda: tool.run(MESSAGE, ctx),
                    },
                    calls,
                )
        finally:
            await servers.stop()
    print(f"echo of the reference server over stdio, {calls} calls each, interleaved (ms from call to result):")
    medians = {}
    for name, pairs in figures.items():
        times, cpus = [t for t, _ in pairs], [c for _, c in pairs]
        medians[name] = statistics.median(times)
        print(
            f"  {name:20} median {medians[name]:5.2f}  p90 {_p90(times):5.2f}  "
            f"(CPU here {statistics.median(cpus):5.2f} a call)"
        )
    sdk, sdk_p90 = medians["the SDK's call_tool"], _p90([t for t, _ in figures["the SDK's call_tool"]])
    for name in ("Connection.call", "McpTool.run"):
        p90 = _p90([t for t, _ in figures[name]])
        print(
            f"  {name} over the SDK: {medians[name] - sdk:+.2f} ms median, {p90 - sdk_p90:+.2f} ms p90 "
            f"({medians[name] / sdk:.2f}x; goal {GOAL_MS:g} ms at most)"
        )


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    with open(os.devnull, "w") as quiet:
        asyncio.run(main_async(calls, quiet))


if __name__ == "__main__":
    main()
