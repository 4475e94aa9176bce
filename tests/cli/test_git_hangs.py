"""Git that Chimera runs itself (the context snapshot, the checkpoints) never hangs a run or outlives it: a
workspace whose `.gitignore` is a named pipe, or whose config includes one, costs one timeout, one line saying
the snapshot is unavailable and naming the setting to wait longer, and no git process left behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.cli_runner import chimera_command, run_chimera
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

UNAVAILABLE = "chimera: the git snapshot is unavailable: "


@pytest.fixture(autouse=True)
def clean_git(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """git sees no system or user config from the machine, and never finds a repository above tmp_path."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    for name in ("XDG_CONFIG_HOME", "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_CONFIG_GLOBAL"):
        monkeypatch.delenv(name, raising=False)


def repository(root: Path) -> Path:
    ws = root / "ws"
    ws.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main", str(ws)], check=True)
    (ws / "a.txt").write_text("hello\n")
    return ws


def fifo_gitignore(root: Path) -> Path:
    ws = repository(root)
    os.mkfifo(ws / ".gitignore")
    return ws


def fifo_include(root: Path) -> Path:
    ws = repository(root)
    os.mkfifo(root / "included")
    subprocess.run(["git", "-C", str(ws), "config", "include.path", str(root / "included")], check=True)
    return ws


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working folder is ``folder`` (a git left behind in the workspace)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.readlink(f"/proc/{name}/cwd") == str(folder):
                    found.append(int(name))
            except OSError:
                continue
    return found


@pytest.mark.parametrize("make", [fifo_gitignore, fifo_include], ids=["gitignore-fifo", "include-fifo"])
def test_a_named_pipe_git_would_read_costs_one_timeout_and_one_line(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, make: object
) -> None:
    """The run completes (a write, pinned by checkpoints, included); one line says why there is no snapshot."""
    assert callable(make)
    ws = make(tmp_path)
    api.script(
        message(tool_use("w1", "write", {"path": "b.txt", "content": "new\n"}), stop_reason="tool_use"),
        message(tool_use("w2", "write", {"path": "c.txt", "content": "new\n"}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    env = {**model_env, "CHIMERA_GIT_TIMEOUT": "1"}
    started = time.monotonic()
    proc = run_chimera("run", "x", "--json", "--workdir", str(ws), "--permission-mode", "bypass", env=env)
    elapsed = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert (events[-1]["type"], events[-1]["success"]) == ("run_finished", True)
    assert (ws / "c.txt").read_text() == "new\n"
    notes = [line for line in proc.stderr.splitlines() if line.startswith(UNAVAILABLE)]
    assert len(notes) == 1, proc.stderr
    assert "did not answer within 1s" in notes[0]
    assert "CHIMERA_GIT_TIMEOUT" in notes[0]
    assert events[0]["notes"] == [notes[0].removeprefix("chimera: ")]
    if make is fifo_gitignore:  # the checkpoints' git reads the workspace's .gitignore too: it gives up once
        [stopped] = [line for line in proc.stderr.splitlines() if "snapshots stopped working" in line]
        assert "took over 1s" in stopped
        assert "set CHIMERA_GIT_TIMEOUT=SECONDS to wait longer" in stopped
    assert "git snapshot is unavailable" in api.requests[0].body["system"]
    assert "Traceback" not in proc.stderr
    assert elapsed < 20  # a timeout or two of a second each, never one per git call
    assert processes_in(ws) == []


def test_ctrl_c_while_git_hangs_on_the_snapshot_ends_at_once(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """SIGINT while git is blocked reading a `.gitignore` pipe: Chimera exits in a second or two, git is killed."""
    ws = fifo_gitignore(tmp_path)
    api.script(message(text("never asked")))
    opened = threading.Event()
    writer: list[int] = []

    def hold_the_pipe() -> None:
        writer.append(os.open(ws / ".gitignore", os.O_WRONLY))  # returns once git opens it to read
        opened.set()

    holder = threading.Thread(target=hold_the_pipe, daemon=True)
    holder.start()
    proc = subprocess.Popen(
        [*chimera_command(), "run", "x", "--json", "--workdir", str(ws), "--permission-mode", "bypass"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env, "CHIMERA_GIT_TIMEOUT": "60"},
    )
    try:
        assert opened.wait(30), "git never opened the pipe"
        stopped = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=30)
        elapsed = time.monotonic() - stopped
    finally:
        if proc.poll() is None:
            proc.kill()
        for fd in writer:
            os.close(fd)
    assert proc.returncode == 1, err
    assert elapsed < 3, f"Chimera took {elapsed:.1f}s to stop"
    assert json.loads(out.splitlines()[-1])["reason"] == "interrupted"
    assert processes_in(ws) == []
    assert api.requests == []
