"""Benchmark: the executor's concurrency and the memory cost of huge tool output.

Run by hand: `python tests/bench/bench_tools.py`. Prints:
- ten 1 MB `read` calls in one message, run concurrently by the executor vs one
  message per call (one by one); the ratio is what concurrency buys;
- the peak memory growth of a `bash` call printing 200 MB (in a fresh process).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chimera.core.tool_group import DEFAULT_TOOLS
from chimera.core.tools.executor import Executor, ToolCall

MEMORY_PROBE = """
import asyncio, json, resource, sys
from pathlib import Path
from chimera.core.tools.base import ToolContext
from chimera.core.tools.bash import Bash
ws, spill = Path(sys.argv[1]), Path(sys.argv[2])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
line = "abcdefghij" * 9 + "abcdefghi"
asyncio.run(Bash().run({"command": f"yes {line} | head -n 2000000"}, ToolContext(ws, spill)))
print(json.dumps({"before_kb": before, "after_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}))
"""


def _files(folder: Path, count: int) -> list[str]:
    names = []
    for i in range(count):
        name = f"big{i}.txt"
        (folder / name).write_text("".join(f"line {n:07d} of file {i} " + "x" * 70 + "\n" for n in range(11_000)))
        names.append(name)
    return names


async def _reads(folder: Path, names: list[str], *, together: bool) -> float:
    executor = Executor(DEFAULT_TOOLS, folder, folder / ".spill", max_output=2_000_000)
    calls = [ToolCall(f"c{i}", "read", {"path": n, "limit": 20_000}) for i, n in enumerate(names)]
    start = time.perf_counter()
    if together:
        await executor.run(calls, lambda _e: None)
    else:
        for call in calls:
            await executor.run([call], lambda _e: None)
    return time.perf_counter() - start


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        names = _files(folder, 10)
        size = sum((folder / n).stat().st_size for n in names) / len(names) / 1e6
        together = statistics.median(asyncio.run(_reads(folder, names, together=True)) for _ in range(5))
        apart = statistics.median(asyncio.run(_reads(folder, names, together=False)) for _ in range(5))
        print(f"ten reads of {size:.1f} MB each (median of 5)")
        print(f"  one message, concurrent  {together * 1000:8.1f} ms")
        print(f"  one by one               {apart * 1000:8.1f} ms   (concurrent is {apart / together:.2f}x faster)")
        spill = folder / "spill"
        out = subprocess.run(
            [sys.executable, "-c", MEMORY_PROBE, tmp, str(spill)], capture_output=True, text=True, check=True
        ).stdout
        probe = json.loads(out)
        grew = (probe["after_kb"] - probe["before_kb"]) / 1024
        saved = (spill / "call.txt").stat().st_size / 1e6
        print(f"bash printing 200 MB: peak memory grew {grew:.1f} MB; saved file {saved:.0f} MB")


if __name__ == "__main__":
    main()
