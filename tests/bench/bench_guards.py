"""Benchmark: what the hardening guards cost on every call.

Run by hand: `python tests/bench/bench_guards.py`. Prints medians, and ratios
where machines differ:
- a `bash(true)` call under its supervisor (Linux) vs the same call in a bare
  process group (the fallback elsewhere);
- a permission decision for a `bash` call with deny and allow rules (the
  command parsed by tree-sitter), and the one-time cost of loading the parser;
- the git snapshot in the system prompt through the scrubbed git runner vs
  plain `git` with no protection;
- `OutputSink` throughput with a secret to mask vs none.
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from chimera.core.loops.workspace_facts import git_snapshot
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.redact import Redactor
from chimera.core.tools import shell
from chimera.core.tools.base import ToolContext
from chimera.core.tools.bash import Bash
from chimera.core.tools.output import OutputSink


def _median_ms(action: Callable[[], object], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        action()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def bash_call(workspace: Path, spill: Path, *, supervised: bool) -> float:
    shell.can_supervise.cache_clear()
    if not supervised:
        shell.can_supervise = lambda: False  # type: ignore[assignment]
    ctx = ToolContext(workspace, spill)
    try:
        return _median_ms(lambda: asyncio.run(Bash().run({"command": "true"}, ctx)), 40)
    finally:
        shell.can_supervise = _original_can_supervise  # type: ignore[assignment]


_original_can_supervise = shell.can_supervise


def parser_load_ms() -> float:
    probe = "import time; t=time.perf_counter(); import chimera.core.permissions.shell as s; s.parse_line('true'); "
    probe += "print((time.perf_counter()-t)*1000)"
    runs = [
        float(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True).stdout) for _ in range(5)
    ]
    return statistics.median(runs)


def decision_us(workspace: Path) -> float:
    policy = PermissionPolicy.build(
        "ask",
        allow=["bash(git status*)", "bash(pytest*)"],
        deny=["bash(rm -rf *)", "bash(git push --force*)", "read(.env)"],
    )
    commands = [
        "pytest -q tests/test_x.py 2>&1 | tail -20",
        "if [ -f x ]; then rm -fr build; fi",
        "git status --short",
        "FOO=1 command /bin/rm -r -f dist && echo done",
    ]
    policy.decide("bash", {"command": "true"}, read_only=False, workspace=workspace)  # the parser is loaded
    rounds = 400
    start = time.perf_counter()
    for i in range(rounds):
        policy.decide("bash", {"command": commands[i % len(commands)]}, read_only=False, workspace=workspace)
    return (time.perf_counter() - start) / rounds * 1e6


def git_snapshots(repo: Path) -> tuple[float, float]:
    def plain() -> None:
        for args in (["status", "--short"], ["log", "--oneline", "-n", "5"], ["branch", "--show-current"]):
            subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=True)

    return _median_ms(lambda: git_snapshot(repo), 15), _median_ms(plain, 15)


def sink_mb_per_s(spill: Path, redactor: Redactor | None) -> float:
    chunk = "some ordinary output line that a build prints, with nothing secret in it\n" * 800
    total = 0
    start = time.perf_counter()
    sink = OutputSink(20_000, spill / "sink.txt", redactor=redactor)
    for _ in range(400):
        sink.write(chunk)
        total += len(chunk)
    sink.close()
    return total / (time.perf_counter() - start) / 1e6


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        workspace, spill = root / "ws", root / "spill"
        workspace.mkdir()
        spill.mkdir()
        supervised = bash_call(workspace, spill, supervised=True)
        grouped = bash_call(workspace, spill, supervised=False)
        ratio = supervised / grouped
        print(f"bash(true): {supervised:.1f} ms supervised vs {grouped:.1f} ms in a process group ({ratio:.1f}x)")
        print(f"permission decision for a bash call with 5 rules: {decision_us(workspace):.0f} µs")
        print(f"loading the shell parser (once, on the first bash call or rule): {parser_load_ms():.0f} ms")
        repo = root / "repo"
        repo.mkdir()
        subprocess.run(["git", "init", "-q", str(repo)], check=True)
        for i in range(200):
            (repo / f"f{i}.txt").write_text(f"file {i}\n")
        subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
        subprocess.run(
            ["git", "-C", str(repo), "-c", "user.name=b", "-c", "user.email=b@b", "commit", "-qm", "x"], check=True
        )
        safe, plain = git_snapshots(repo)
        print(f"git snapshot: {safe:.1f} ms scrubbed vs {plain:.1f} ms plain git ({safe / plain:.1f}x)")
        secret = Redactor(["sk-ant-bench-0123456789abcdef0123456789"])
        masked, bare = sink_mb_per_s(spill, secret), sink_mb_per_s(spill, None)
        print(f"OutputSink: {masked:.0f} MB/s masking a secret vs {bare:.0f} MB/s with none ({bare / masked:.2f}x)")


if __name__ == "__main__":
    main()
