"""Compare tests' helpers: a variant's replies that write a file, a session with a named point to compare
from, and ``chimera compare`` started as a process that a test signals."""

from __future__ import annotations

import fcntl
import os
import resource
import subprocess
import termios
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from tests.cli_runner import chimera_command, run_here
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use
from tests.switch_helpers import answer_node, two_runs

__all__ = ["files_at_most", "named_session", "start_compare", "writes"]


def writes(path: str, content: str, answer: str, model: str) -> list[Reply]:
    """A variant's replies: write ``path``, then say ``answer``."""
    return [
        message(tool_use("w", "write", {"path": path, "content": content}), stop_reason="tool_use", model=model),
        message(text(answer), model=model),
    ]


def named_session(api: FakeAnthropic, model_env: dict[str, str], project: Path, home: Path) -> str:
    """Two recorded runs (a.txt v1, then v2 and b.txt), the point between them named ``before-v2``."""
    session_id = two_runs(api, model_env, project)
    named = run_here("checkpoint", session_id, "before-v2", "--node", answer_node(home, session_id, "Wrote v1."))
    assert named.returncode == 0, named.stderr
    return session_id


def start_compare(
    *args: str,
    env: dict[str, str],
    scratch: Path,
    stdout: int | IO[Any] = subprocess.PIPE,
    stderr: int | IO[Any] = subprocess.PIPE,
    terminal: int | None = None,
) -> subprocess.Popen[str]:
    """``chimera compare ARGS`` as a process of its own, its scratch copies made in ``scratch`` (TMPDIR).

    With ``terminal`` (a pty's other end) it leads a session of its own with that terminal as its controlling
    terminal and its stdin, as a shell's job in a terminal window has; ``stdout`` and ``stderr`` may be it too."""
    session = terminal is not None
    return subprocess.Popen(
        [*chimera_command(), "compare", *args],
        text=True,
        env={**os.environ, **env, "TMPDIR": str(scratch)},
        stdin=terminal if terminal is not None else subprocess.DEVNULL,
        stdout=stdout,
        stderr=stderr,
        start_new_session=session,
        preexec_fn=_take_terminal if session else None,
    )


def _take_terminal() -> None:
    """In the child, a session leader by now: its stdin (a terminal) becomes its controlling terminal."""
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def files_at_most(size: int) -> Callable[[], None]:
    """A ``preexec_fn``: no file the child writes may grow past ``size`` bytes (EFBIG past it, where a full disk
    gives ENOSPC: the same ``write`` failing, nothing written; see tests/cli/test_full_disk.py)."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))

    return limit
