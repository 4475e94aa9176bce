"""Benchmark: cold start of `chimera --help` (with and without a key to hand over), and `import anthropic`.

Run by hand: `python tests/bench/bench_startup.py [runs]`. Prints medians in
milliseconds, and the ratio to a bare `python -c pass` on the same machine
(ratios travel between machines; milliseconds do not). The workbench's first
frame is `bench_first_frame.py`'s: the real command in a terminal, against a
minimal Textual app's.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _median_ms(command: list[str], runs: int, env: dict[str, str]) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, env=env)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 7
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    env["CHIMERA_HOME"] = tempfile.mkdtemp(prefix="chimera-bench-")
    chimera = str(Path(sys.executable).with_name("chimera"))
    bare = _median_ms([sys.executable, "-c", "pass"], runs, env)
    helped = _median_ms([chimera, "--help"], runs, env)
    keyed = _median_ms([chimera, "--help"], runs, {**env, "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key-0000"})
    sdk = _median_ms([sys.executable, "-c", "import anthropic"], runs, env)
    print(f"runs: {runs} (median)")
    print(f"python -c pass            {bare:8.0f} ms")
    print(f"chimera --help            {helped:8.0f} ms   ({helped / bare:.1f}x bare python)")
    print(f"the same, with a key set  {keyed:8.0f} ms   ({keyed / bare:.1f}x: it restarts without the key)")
    print(f"import anthropic (avoided){sdk:8.0f} ms   ({sdk / bare:.1f}x bare python)")


if __name__ == "__main__":
    main()
