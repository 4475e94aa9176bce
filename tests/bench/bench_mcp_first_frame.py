"""Benchmark: the workbench's first frame with five MCP servers configured vs none.

Run by hand: `python tests/bench/bench_mcp_first_frame.py [runs]` (needs tmux, and npm for the reference server; 25
runs of each by default).

The real `chimera` in a tmux terminal (120x40), timed as `bench_first_frame.py` times it (its machinery, imported):
a fresh, empty workspace, a model configured at a port nobody listens on, from asking tmux to start it to the poll
that sees its welcome and input; the checkout's modules compiled first. Two `CHIMERA_HOME`s made for the run, each
with a `config.toml`: one naming no server, one naming five copies of the reference server (`[mcp.servers.NAME]`),
each given an environment variable naming this run, by which its processes are found in `/proc`. The two start in
turn, the order alternating. The servers start once the first frame is on screen, so the goal is the two within 5%.

Before the timed runs, one start with the servers waits, unmeasured, for the status line's `mcp 5/5`, so they do
start (and prints how long after the first frame they were ready). After every start, the bench waits until
chimera has ended (it outlives its tmux session by a tenth of a second or so) and, with the servers, until none of
their processes is left (none may outlive the workbench), before the next start.
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.bench.bench_first_frame import _compiled, _dead_port, _first_frame, _pane, _tmux, _until
from tests.cli_runner import chimera_command
from tests.mcp_helpers import everything_server

SERVERS = 5
MARK = "CHIMERA_BENCH_RUN"  # the variable each server is given, with this run's id
GOAL = 1.05
SHOWS = ("Welcome to Chimera", "Tell Chimera what to do")


def _settings(home: Path, run: str) -> None:
    """``home/config.toml`` naming five copies of the reference server, each marked with ``run``."""
    command = str(everything_server())
    home.mkdir()
    tables = [
        f'[mcp.servers.everything-{n}]\ncommand = "{command}"\nenv = {{ {MARK} = "{run}" }}\n'
        for n in range(1, SERVERS + 1)
    ]
    (home / "config.toml").write_text("\n".join(tables))


def _servers_left(run: str) -> list[int]:
    """The pids of the processes marked with ``run``: the servers still running."""
    mark = f"{MARK}={run}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:  # ended meanwhile, or not ours to read
                continue
            if mark in environ.split(b"\0"):
                pids.append(int(entry.name))
    return pids


def _ended(pid: int) -> bool:
    """Whether process ``pid`` has ended (gone, or a zombie its parent has yet to reap)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("bench: tmux is not installed")
    _compiled()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 25
    run = uuid.uuid4().hex[:12]
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp, "work")
        workdir.mkdir()
        homes = {"none": Path(tmp, "home-none"), "five": Path(tmp, "home-five")}
        homes["none"].mkdir()
        (homes["none"] / "config.toml").write_text("# no MCP server\n")
        _settings(homes["five"], run)
        base = {
            "PATH": os.environ.get("PATH", ""),
            "TERM": "tmux-256color",
            "HOME": tmp,
            "LANG": "C.UTF-8",
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_dead_port()}",
            "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key-0000",
        }
        envs = {name: {**base, "CHIMERA_HOME": str(home)} for name, home in homes.items()}
        times: dict[str, list[float]] = {name: [] for name in homes}
        cpus: dict[str, list[float]] = {name: [] for name in homes}
        ready_after: list[float] = []
        started: list[int] = []  # the pid of each start of chimera

        def servers_ready(pid: int) -> None:
            started.append(pid)
            seen = time.perf_counter()
            _until(f"the status line's mcp {SERVERS}/{SERVERS}", lambda: f"mcp {SERVERS}/{SERVERS}" in _pane())
            ready_after.append(time.perf_counter() - seen)

        def start(name: str, wait_for_servers: bool = False) -> tuple[float, float]:
            seen = servers_ready if wait_for_servers else started.append
            figures = _first_frame(chimera_command(), envs[name], workdir, SHOWS, seen)
            _until("chimera to end", lambda: _ended(started[-1]), timeout=30)  # it outlives its tmux session a little
            if name == "five":
                _until("the servers to end with the workbench", lambda: not _servers_left(run), timeout=30)
            return figures

        _tmux("new-session", "-d", "-s", "keep")  # the tmux server stays up between runs
        try:
            start("none")  # once each, unmeasured: the disk cache warm
            start("five", wait_for_servers=True)
            for n in range(runs):
                for name in ("none", "five") if n % 2 == 0 else ("five", "none"):
                    elapsed, cpu = start(name)
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
        finally:
            _tmux("kill-server")
    print(f"first frame in tmux at 120x40, median of {runs} interleaved runs each (wall; CPU of the process):")
    for name in homes:
        spread = f"{min(times[name]):.2f}-{max(times[name]):.2f} s"
        wall, cpu = statistics.median(times[name]), statistics.median(cpus[name])
        label = "no MCP server" if name == "none" else f"{SERVERS} MCP servers"
        print(f"  {label:13} {wall:5.2f} s  ({spread});  CPU {cpu:5.2f} s (least {min(cpus[name]):.2f} s)")
    for what, figures in (("wall", times), ("CPU", cpus)):
        five, none = (statistics.median(figures[name]) for name in ("five", "none"))
        print(f"  ratio, {what:4}  {five / none:5.2f}x (goal {GOAL}x at most)")
    print(f"  the {SERVERS} servers ready {ready_after[0]:.2f} s after the first frame (mcp {SERVERS}/{SERVERS})")


if __name__ == "__main__":
    main()
