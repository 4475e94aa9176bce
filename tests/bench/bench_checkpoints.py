"""Benchmark: workspace checkpoints on a 2,000-file workspace.

Run by hand: `python tests/bench/bench_checkpoints.py [files]`. Prints the time of
the first snapshot (every file hashed), of a snapshot with nothing changed (the
cost paid before every tool call that can change files), of a snapshot after
editing 10 files, of a preview and a restore that switch 100 changed files and
20 created ones back, and of pruning; then the shadow repository's size.
Medians of several runs where a run leaves the state as it found it.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from chimera.core.sessions.checkpoints import ShadowRepo


def _workspace(folder: Path, count: int) -> list[Path]:
    paths = []
    for i in range(count):
        path = folder / f"pkg{i % 40:02d}" / f"sub{i % 7}" / f"module_{i:05d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"def f{n}_{i}(x):\n    return x * {n} + {i}\n\n" for n in range(60)))
        paths.append(path)
    return paths


def _ms(action: Callable[[], object], runs: int = 1) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    with tempfile.TemporaryDirectory() as tmp:
        workspace = Path(tmp) / "ws"
        workspace.mkdir()
        paths = _workspace(workspace, count)
        size = sum(p.stat().st_size for p in paths)
        repo = ShadowRepo(workspace, Path(tmp) / "shadow.git")
        print(f"workspace: {count} files, {size / 1e6:.1f} MB")
        print(f"first snapshot:             {_ms(repo.snapshot):8.1f} ms")
        base = repo.snapshot()
        print(f"snapshot, nothing changed:  {_ms(repo.snapshot, runs=9):8.1f} ms")
        for path in paths[:10]:
            path.write_text(path.read_text() + "# edited\n")
        print(f"snapshot, 10 files edited:  {_ms(repo.snapshot):8.1f} ms")
        for path in paths[10:100]:
            path.write_text(path.read_text() + "# edited\n")
        for i in range(20):
            (workspace / "new" / f"created_{i}.py").parent.mkdir(exist_ok=True)
            (workspace / "new" / f"created_{i}.py").write_text(f"created = {i}\n")
        edited = repo.snapshot()
        known = repo.seen([base, edited])
        print(f"seen() of two snapshots:    {_ms(lambda: repo.seen([base, edited]), runs=9):8.1f} ms")
        print(f"preview, 120 paths:         {_ms(lambda: repo.changes(base, known=known), runs=5):8.1f} ms")
        switches = []
        for _ in range(5):
            switches.append(_ms(lambda: repo.restore(base, known=known)))
            switches.append(_ms(lambda: repo.restore(edited, known=known)))
        print(f"restore, 120 paths:         {statistics.median(switches):8.1f} ms (median of 10 switches)")
        print(f"store before prune:         {repo.disk_bytes() / 1e6:8.2f} MB")
        print(f"prune, keeping 2 snapshots: {_ms(lambda: repo.prune([base, edited])):8.1f} ms")
        print(f"store after prune:          {repo.disk_bytes() / 1e6:8.2f} MB")
        print(f"snapshot after prune:       {_ms(repo.snapshot, runs=5):8.1f} ms")


if __name__ == "__main__":
    main()
