"""Benchmark: what the sandbox costs a command.

Run by hand: `python tests/bench/bench_sandbox.py`. Prints medians, each through the
real `bash` tool (its supervisor, the Landlock rules made and applied per call, and the
git directory's hooks and config read before and after it: the workspace is a git
repository, as most are):
- `bash(true)` sandboxed vs not (goal: at most 1.5x);
- `pytest` over a workspace of 2,000 test files sandboxed vs not (goal: at most 1.1x);
- making the rules alone (``Confinement.spec``), in Chimera's process.
Rounds alternate sandboxed and not, so a machine busy with something else weighs on both.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chimera.core.sandbox.policy import Confinement, SandboxSettings
from chimera.core.sandbox.probe import support
from chimera.core.tools.base import ToolContext
from chimera.core.tools.bash import Bash


def _call_ms(command: str, ctx: ToolContext) -> float:
    start = time.perf_counter()
    result = asyncio.run(Bash().run({"command": command, "timeout": 600}, ctx))
    took = (time.perf_counter() - start) * 1000
    if result.is_error:
        raise SystemExit(f"{command!r} failed: {result.output[-2000:]}")
    return took


def paired(command: str, plain: ToolContext, boxed: ToolContext, rounds: int) -> tuple[float, float]:
    """Median milliseconds of ``command`` unsandboxed and sandboxed, rounds alternating."""
    outside, inside = [], []
    for _ in range(rounds):
        outside.append(_call_ms(command, plain))
        inside.append(_call_ms(command, boxed))
    return statistics.median(outside), statistics.median(inside)


def spec_us(confinement: Confinement, abi: int) -> float:
    rounds = 200
    start = time.perf_counter()
    for _ in range(rounds):
        confinement.spec(abi)
    return (time.perf_counter() - start) / rounds * 1e6


def _test_files(folder: Path, count: int) -> None:
    for i in range(count):
        (folder / f"test_m{i:04d}.py").write_text(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n")


def main() -> None:
    found = support()
    if not found.available:
        raise SystemExit(f"no sandbox here: {found.missing}")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace, spill = root / "ws", root / "spill"
        workspace.mkdir()
        spill.mkdir()
        subprocess.run(["git", "init", "-q", str(workspace)], check=True)  # its hooks and config guarded
        confinement = SandboxSettings().confine(workspace)
        plain, boxed = ToolContext(workspace, spill), ToolContext(workspace, spill, sandbox=confinement)
        print(f"mechanism: {found.describe()}")
        held = asyncio.run(Bash().run({"command": f"echo x > {root / 'outside'}"}, boxed))
        if held.data.get("sandbox") != "refused":
            raise SystemExit(f"the sandbox did not hold, so there is nothing to measure: {held.output}")
        print(f"making the rules: {spec_us(confinement, found.abi):.0f} µs a call")
        outside, inside = paired("true", plain, boxed, 60)
        print(f"bash(true): {inside:.1f} ms sandboxed vs {outside:.1f} ms not ({inside / outside:.2f}x)")
        _test_files(workspace, 2000)
        pytest = f"{sys.executable} -m pytest -q -p no:cacheprovider -p no:randomly -x ."
        outside, inside = paired(pytest, plain, boxed, 3)
        print(
            f"pytest over 2,000 files: {inside / 1000:.2f} s sandboxed vs {outside / 1000:.2f} s not "
            f"({inside / outside:.2f}x)"
        )


if __name__ == "__main__":
    main()
