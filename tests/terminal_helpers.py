"""Driving the real `chimera` in a real terminal: a private tmux server, what its pane shows, and a wait for what
only the terminal can show."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli_runner import chimera_command

__all__ = ["Terminal", "needs_tmux", "wait_for"]

needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Terminal:
    """A tmux server of its own (apart from the person's), called as ``tmux`` is: ``terminal("kill-server")``."""

    def __init__(self, name: str) -> None:
        self.socket = f"{name}-{uuid.uuid4().hex[:8]}"

    def __call__(self, *args: str, check: bool = False) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check)

    def capture(self, session: str, *, history: bool = False) -> str:
        """What the pane of ``session`` shows (with ``history``, what scrolled off it too)."""
        return self("capture-pane", "-p", *(["-S", "-"] if history else []), "-t", session).stdout

    def alive(self, session: str) -> bool:
        return self("has-session", "-t", session).returncode == 0

    def start_chimera(
        self,
        session: str,
        home: Path,
        workdir: Path,
        api_url: str,
        *options: str,
        env: dict[str, str] | None = None,
        exit_code: Path | None = None,
    ) -> None:
        """The real `chimera` in a new 80x24 session of this server, against the Messages API at ``api_url``
        (``env`` adds settings), ready for a task. The pane's process is chimera itself (its shell exec'd it);
        with ``exit_code``, it is the shell's child, and the shell writes chimera's exit code to that file."""
        settings = {"CHIMERA_HOME": str(home), "ANTHROPIC_BASE_URL": api_url, "ANTHROPIC_API_KEY": "k", **(env or {})}
        command = " ".join(
            [
                "env" if exit_code is not None else "exec env",
                *[f"-u {name}" for name in os.environ if name.startswith("ANTHROPIC_")],
                "NO_PROXY=127.0.0.1",
                *(shlex.quote(f"{name}={value}") for name, value in settings.items()),
                *map(shlex.quote, chimera_command()),
                "--workdir",
                shlex.quote(str(workdir)),
                *options,
            ]
        )
        if exit_code is not None:
            command = f"{command}; echo $? > {shlex.quote(str(exit_code))}"
        self("new-session", "-d", "-s", session, "-x", "80", "-y", "24", command, check=True)
        assert wait_for(lambda: "Tell Chimera" in self.capture(session)), self.capture(session)

    def pid(self, session: str) -> int:
        """The pid of the program in the pane of ``session``."""
        return int(self("display-message", "-p", "-t", session, "#{pane_pid}", check=True).stdout)

    def chimera_pid(self, session: str) -> int:
        """The pid of chimera started with ``exit_code``: the only child of the pane's shell."""
        shell = self.pid(session)
        return int(Path(f"/proc/{shell}/task/{shell}/children").read_text().split()[0])

    def pane_dead(self, session: str) -> bool:
        """The program in the pane has ended (the pane is kept to read what it left)."""
        return self("display-message", "-p", "-t", session, "#{pane_dead}").stdout.strip() == "1"


def wait_for(condition: Callable[[], bool], timeout: float = 30.0) -> bool:
    """Poll a condition that only the terminal can show, until it holds or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()
