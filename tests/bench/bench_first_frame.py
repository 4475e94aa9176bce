"""Benchmark: the workbench's first frame, read from outside, against a minimal Textual app's.

Run by hand: `python tests/bench/bench_first_frame.py [runs]` (needs tmux; 15 runs of each by default).
The real `chimera` starts in a tmux terminal (120x40) on a fresh, empty workspace with a model configured
(a key, and `ANTHROPIC_BASE_URL` at a 127.0.0.1 port nobody listens on: the welcome asks no server
anything), so it opens on its welcome; the pane is polled (`tmux capture-pane`) until the welcome and the
input show. Interleaved with it, a minimal Textual app (a `Static` and an `Input`) is started and polled
the same way. Each time runs from just before tmux is asked to start the program to the poll that sees its
first frame; the program's CPU by then is read from `/proc` (with the key, chimera's first process, which
starts it again without the key, counts too: it is the same process). Prints the medians and their ratios
(the goal is 1.3x at most).

What a person runs is an installed Chimera (``pip install .``), whose modules pip compiled to ``.pyc`` files; an
editable checkout has none where ``PYTHONDONTWRITEBYTECODE`` is set, and would compile them on every start. So the
bench first compiles this checkout's modules (``compileall``), as the install would have.

`BENCH_BASELINE=CMD` also times another `chimera` (an older checkout's, installed in a venv of its own),
interleaved with the two, to measure a change against the code before it. `BENCH_PROFILE=FILE` also
records one more start of `chimera` with py-spy (`pip install py-spy`), without the key (a process holding
one cannot be read), into FILE (speedscope JSON).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.cli_runner import chimera_command

SOCKET = f"chimera-bench-{uuid.uuid4().hex[:8]}"
POLL = 0.01  # seconds between looks at the pane (each look is a tmux process of its own, ~2 ms of CPU)

MINIMAL = """
from textual.app import App
from textual.widgets import Input, Static

class Minimal(App[None]):
    def compose(self):
        yield Static("Minimal app ready", markup=False)
        yield Input(placeholder="Type here")

Minimal().run()
"""


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=True).stdout


def _pane() -> str:
    result = subprocess.run(["tmux", "-L", SOCKET, "capture-pane", "-p", "-t", "run"], capture_output=True, text=True)
    return result.stdout


def _alive() -> bool:
    return subprocess.run(["tmux", "-L", SOCKET, "has-session", "-t", "run"], capture_output=True).returncode == 0


def _until(what: str, ready: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``ready`` (a terminal can only be watched): a bench waits, and says what it waited for."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: gave up waiting for {what}; the pane shows:\n{_pane()}")
        time.sleep(POLL)


def _dead_port() -> int:
    """A loopback port nobody listens on (bound, then let go)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _cpu_seconds(pid: int) -> float:
    """CPU seconds process ``pid`` has run so far, every thread (``schedstat``: nanoseconds, not clock ticks)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended between the listing and the read
            total += int((task / "schedstat").read_text().split()[0])
    return total / 1e9


def _left_running(pid: int) -> None:
    """What a timed run does with the program once its first frame is seen: nothing (it is then ended)."""


def _first_frame(
    command: list[str],
    env: dict[str, str],
    cwd: Path,
    shows: tuple[str, ...],
    seen: Callable[[int], None] = _left_running,
) -> tuple[float, float]:
    """Seconds from asking tmux to start ``command`` to the first look at the pane that shows all of ``shows``,
    and the CPU seconds the program had used by then (the machine's other work counts in the first, not in this).
    ``seen`` is called with the program's pid once it shows them, before it is ended."""
    line = " ".join(["exec env -i", *(shlex.quote(f"{k}={v}") for k, v in env.items()), *map(shlex.quote, command)])
    start = time.perf_counter()
    size = ["-x", "120", "-y", "40"]
    pid = int(_tmux("new-session", "-d", "-P", "-F", "#{pane_pid}", "-s", "run", *size, "-c", str(cwd), line))
    _until(f"{command[-1]!r} on screen", lambda: all(s in _pane() for s in shows))
    elapsed = time.perf_counter() - start
    cpu = _cpu_seconds(pid)
    seen(pid)
    subprocess.run(["tmux", "-L", SOCKET, "kill-session", "-t", "run"], capture_output=True)  # (it may have ended)
    _until("the program to end", lambda: not _alive())
    return elapsed, cpu


def _profile(output: str, env: dict[str, str], cwd: Path) -> None:
    """One start of chimera under py-spy (no key: a process holding one cannot be read), to its welcome."""
    keyless = {k: v for k, v in env.items() if k != "ANTHROPIC_API_KEY"}
    beside = Path(sys.executable).with_name("py-spy")  # installed in this venv, or on the PATH
    program = str(beside) if beside.exists() else shutil.which("py-spy") or "py-spy"
    spy = [program, "record", "-r", "500", "-f", "speedscope", "-o", output, "--"]

    def stop(pid: int) -> None:  # py-spy writes its file when interrupted
        os.kill(pid, signal.SIGINT)
        _until("py-spy to write its profile", lambda: Path(output).exists())

    _first_frame([*spy, *chimera_command()], keyless, cwd, ("Welcome to Chimera",), stop)


def _compiled() -> None:
    """This checkout's modules compiled to ``.pyc``, as an installed Chimera's are (see the docstring)."""
    root = Path(__file__).resolve().parents[2]
    folders = [str(root / part) for part in ("core", "tui", "themes")]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *folders], check=True)


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("bench: tmux is not installed")
    _compiled()
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    with tempfile.TemporaryDirectory() as tmp:
        home, workdir = Path(tmp, "home"), Path(tmp, "work")
        workdir.mkdir()
        base = {"PATH": os.environ.get("PATH", ""), "TERM": "tmux-256color", "HOME": tmp, "LANG": "C.UTF-8"}
        chimera_env = {
            **base,
            "CHIMERA_HOME": str(home),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{_dead_port()}",
            "ANTHROPIC_API_KEY": "sk-ant-bench-not-a-real-key-0000",
        }
        programs: dict[str, tuple[list[str], dict[str, str], tuple[str, ...]]] = {
            "chimera": (chimera_command(), chimera_env, ("Welcome to Chimera", "Tell Chimera what to do")),
            "minimal": ([sys.executable, "-c", MINIMAL], base, ("Minimal app ready", "Type here")),
        }
        if baseline := os.environ.get("BENCH_BASELINE"):
            programs["baseline"] = (shlex.split(baseline), chimera_env, programs["chimera"][2])
        times: dict[str, list[float]] = {name: [] for name in programs}
        cpus: dict[str, list[float]] = {name: [] for name in programs}
        _tmux("new-session", "-d", "-s", "keep")  # the tmux server stays up between runs
        try:
            for command, env, shows in programs.values():  # once each, unmeasured: the disk cache warm
                _first_frame(command, env, workdir, shows)
            for run in range(runs):
                order = list(programs)[run % len(programs) :] + list(programs)[: run % len(programs)]
                for name in order:
                    command, env, shows = programs[name]
                    elapsed, cpu = _first_frame(command, env, workdir, shows)
                    times[name].append(elapsed)
                    cpus[name].append(cpu)
            if profile := os.environ.get("BENCH_PROFILE"):
                _profile(profile, chimera_env, workdir)
        finally:
            _tmux("kill-server")
    print(f"first frame in tmux at 120x40, median of {runs} interleaved runs each (wall; CPU of the process):")
    for name in programs:
        spread = f"{min(times[name]):.2f}-{max(times[name]):.2f} s"
        wall, cpu = statistics.median(times[name]), statistics.median(cpus[name])
        print(f"  {name:8} {wall:5.2f} s  ({spread});  CPU {cpu:5.2f} s (least {min(cpus[name]):.2f} s)")
    for what, figures in (("wall", times), ("CPU", cpus)):
        chimera, minimal = (statistics.median(figures[name]) for name in ("chimera", "minimal"))
        line = f"  ratio, {what:4}  {chimera / minimal:5.2f}x (goal 1.3x at most)"
        if "baseline" in figures:
            line += f";  chimera / baseline {chimera / statistics.median(figures['baseline']):5.2f}x"
        print(line)


if __name__ == "__main__":
    main()
