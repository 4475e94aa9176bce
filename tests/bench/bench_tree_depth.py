"""Benchmark: `chimera tree ID` on branches nested 8,000 deep costs what `--json` does (issue 25, item 12).

Run by hand: `python tests/bench/bench_tree_depth.py [levels]` (about half a minute on two cores). The
session (``tests.tree_helpers.nested_session``) is 16,001 prompts whose branches nest 8,000 deep: every
prompt after the first is asked twice from the one before, the second asked from again. Prints, for the
whole process from outside (median of three, the output to a pipe, no COLUMNS so no line is cut):

- `chimera tree ID` (text) and `chimera tree ID --json`, their ratio (target: text within 2× JSON), and the
  bytes each wrote: the text is as long as its lines, however deep they nest.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.cli_runner import chimera_command
from tests.tree_helpers import nested_session

LEVELS = 8_001
ROUNDS = 3


def timed(home: Path, *args: str) -> tuple[float, int]:
    """The median wall time of `chimera ARGS` over ROUNDS runs, and the bytes it wrote."""
    env = {**os.environ, "CHIMERA_HOME": str(home)}
    env.pop("COLUMNS", None)
    times = []
    size = 0
    for _ in range(ROUNDS):
        started = time.perf_counter()
        proc = subprocess.run([*chimera_command(), *args], env=env, capture_output=True, check=True)
        times.append(time.perf_counter() - started)
        size = len(proc.stdout)
    return statistics.median(times), size


def main() -> None:
    levels = int(sys.argv[1]) if len(sys.argv) > 1 else LEVELS
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch)
        session_id = nested_session(home, home, levels=levels)
        text, text_size = timed(home, "tree", session_id)
        json, json_size = timed(home, "tree", session_id, "--json")
        nodes = 2 * levels - 1
        print(f"chimera tree, {nodes:,} prompts nested {levels - 1:,} deep (median of {ROUNDS}, whole process):")
        print(f"  text    {text:6.2f} s   {text_size / 1e6:7.1f} MB written")
        print(f"  --json  {json:6.2f} s   {json_size / 1e6:7.1f} MB written")
        print(f"  text / json  {text / json:.2f}×   (target 2×)")


if __name__ == "__main__":
    main()
