"""Benchmark: what the whole `chimera` process costs a person while a reply streams, read from outside.

Run by hand: `python tests/bench/bench_process_cpu.py` (about a minute; needs tmux). The real
`chimera` runs in a tmux terminal (120x40 by default, `BENCH_SIZE=80x24` for another), resumed
on a session whose 40 finished answers are on screen; a task is sent, and the loopback Messages
API server streams the answer at 100 text deltas a second for `BENCH_SECONDS` (10). The process's
CPU time (user + system, every thread) is read from `/proc/PID/stat` as the stream begins and as
it ends. Prints the CPU seconds per wall second (the share of one core), and the same for the
process sitting idle with the 40 answers on screen. `BENCH_PROFILE=FILE` also records the stream
with py-spy (`pip install py-spy`), only what holds the GIL, into FILE (speedscope JSON), sampling
`BENCH_RATE` times a second (100; py-spy pauses the process to sample, so a high rate adds to its CPU).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, paced, text

FINISHED = 40  # answers on screen while one streams
RATE = 100  # text deltas a second, about a token each
SECONDS = float(os.environ.get("BENCH_SECONDS", "10"))
SIZE = os.environ.get("BENCH_SIZE", "120x40")
SOCKET = f"chimera-bench-{uuid.uuid4().hex[:8]}"


def _answer(turn: int) -> str:
    """A finished answer of a few paragraphs, a list and a code block (~1.2 KB)."""
    return (
        f"Turn {turn}: I read the module and changed **two** things in `parser_{turn}.py`.\n\n"
        + "The tokenizer now keeps its position across lines, so a string that spans two lines is one token. " * 3
        + "\n\n"
        + "".join(f"- point {n}: `name_{n}` is checked before it is used\n" for n in range(5))
        + "\n```python\n"
        + "".join(f"def step_{n}(x: int) -> int:\n    return x * {n}\n" for n in range(6))
        + "```\n\nThe tests pass."
    )


def _session(home: Path, workdir: Path) -> str:
    with SessionStore.create(home, "bench", workdir=workdir, model="claude-sonnet-4-6") as store:
        for turn in range(FINISHED):
            store.add("user", {"role": "user", "content": f"Fix parser {turn}."})
            store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": _answer(turn)}]})
        return store.id


def _tmux(*args: str) -> str:
    return subprocess.run(["tmux", "-L", SOCKET, *args], capture_output=True, text=True, check=True).stdout


def _until(what: str, ready: Callable[[], bool], timeout: float = 60.0) -> None:
    """Poll ``ready`` (a terminal can only be watched): a bench waits, and says what it waited for."""
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise SystemExit(f"bench: gave up waiting for {what}")
        time.sleep(0.05)


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds of process ``pid``, every thread, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _share(pid: int, start: Callable[[], None], end: Callable[[], None]) -> float:
    """The process's CPU seconds per wall second (its share of one core) from ``start`` returning to ``end``."""
    start()
    cpu, wall = _cpu_seconds(pid), time.monotonic()
    end()
    return (_cpu_seconds(pid) - cpu) / (time.monotonic() - wall)


def main() -> None:
    if shutil.which("tmux") is None:
        raise SystemExit("bench: tmux is not installed")
    width, height = SIZE.split("x")
    begun, sent = threading.Event(), threading.Event()
    words = [f"word{n % 89} " if n % 30 else "end.\n\n" for n in range(1, int(RATE * SECONDS) + 1)]
    with tempfile.TemporaryDirectory() as tmp, FakeAnthropic() as api:
        home, workdir = Path(tmp, "home"), Path(tmp, "work")
        workdir.mkdir()
        session = _session(home, workdir)
        api.script(paced(message(text("".join(words), pieces=len(words))), 1 / RATE, begun, sent))
        env = {"CHIMERA_HOME": str(home), "ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "k"}
        command = ["env", *(f"{k}={v}" for k, v in env.items()), *chimera_command(), "--resume", session]
        _tmux("new-session", "-d", "-s", "b", "-x", width, "-y", height, "-c", str(workdir), *command)
        try:
            pid = int(_tmux("display-message", "-p", "-t", "b", "#{pane_pid}").strip())
            _until("the resumed session on screen", lambda: "Resumed session" in _tmux("capture-pane", "-p", "-t", "b"))
            idle = _share(pid, lambda: None, lambda: time.sleep(3))
            _tmux("send-keys", "-t", "b", "say it", "Enter")
            profile = os.environ.get("BENCH_PROFILE")
            spy = None

            def stream_begins() -> None:
                nonlocal spy
                if not begun.wait(30):
                    raise SystemExit("bench: the task never reached the server")
                if profile:
                    spy_args = [
                        "record",
                        "--gil",
                        "-r",
                        os.environ.get("BENCH_RATE", "100"),
                        "-p",
                        str(pid),
                        "-f",
                        "speedscope",
                        "-o",
                        profile,
                    ]
                    spy = subprocess.Popen(["py-spy", *spy_args])

            streaming = _share(pid, stream_begins, lambda: sent.wait(SECONDS * 3))
            if spy is not None:
                spy.send_signal(signal.SIGINT)  # py-spy writes its file on an interrupt
                spy.wait()
        finally:
            _tmux("kill-server")
    print(f"the whole chimera process in tmux at {SIZE}, {FINISHED} finished answers on screen:")
    print(f"  idle:                        {idle:6.1%} of a core")
    print(f"  streaming {RATE} deltas a second: {streaming:6.1%} of a core (target 15%)")


if __name__ == "__main__":
    main()
