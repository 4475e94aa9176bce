"""The real `chimera` in a real terminal (tmux): `--resume` with no id opens the picker, a filter and enter resume
the session with its history, escape ends with exit 0 and nothing made; quitting before any task leaves no session."""

from __future__ import annotations

import os
import shlex
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from chimera.core.sessions.store import SessionStore
from tests.cli_runner import chimera_command
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic
from tests.terminal_helpers import Terminal, needs_tmux, wait_for

pytestmark = needs_tmux

tmux = Terminal("chimera-picker")  # a private tmux server, apart from the person's own
capture = tmux.capture


def session_folders(home: Path) -> list[str]:
    folder = home / "sessions"
    return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []


@pytest.fixture
def terminal(isolated_env: Path, project: Path) -> Iterator[Callable[..., str]]:
    """Start `chimera ARGS` in a tmux pane (80×24) in the project folder, against a loopback model; then
    `exit N` shows once it ends. Returns the pane's name; the server is killed afterwards."""
    with FakeAnthropic() as api:

        def start(*args: str) -> str:
            name = f"pane{uuid.uuid4().hex[:6]}"
            settings = [f"CHIMERA_HOME={isolated_env}", f"ANTHROPIC_BASE_URL={api.url}", "ANTHROPIC_API_KEY=k"]
            command = " ".join(
                [
                    "env",
                    *[f"-u {var}" for var in os.environ if var.startswith("ANTHROPIC_")],
                    "NO_PROXY=127.0.0.1",
                    f"CHIMERA_MODEL={MODEL}",
                    *map(shlex.quote, settings),
                    *map(shlex.quote, [*chimera_command(), *args]),
                ]
            )
            shell = f'cd {shlex.quote(str(project))} && {command}; echo "exit $?"; sleep 60'
            tmux("new-session", "-d", "-s", name, "-x", "80", "-y", "24", "sh", "-c", shell, check=True)
            return name

        try:
            yield start
        finally:
            tmux("kill-server")


def recorded(home: Path, workdir: Path, session_id: str, task: str, answer: str) -> None:
    """A session as a workbench run leaves it: the task and its answer."""
    with SessionStore.create(home, session_id, workdir=workdir.resolve(), model=MODEL) as store:
        store.add("user", {"role": "user", "content": task})
        store.add("assistant", {"role": "assistant", "content": [{"type": "text", "text": answer}]})


def test_resume_without_an_id_picks_filters_and_resumes(
    terminal: Callable[..., str], isolated_env: Path, project: Path
) -> None:
    """`chimera --resume`: the picker lists both sessions; typing `CLI` leaves one; enter opens it with its history."""
    recorded(isolated_env, project, "18c0aa01", "fix the median", "The median is fixed.")
    recorded(isolated_env, project, "18c0bb02", "add a CLI", "The CLI is added.")
    pane = terminal("--resume")
    assert wait_for(lambda: "2 sessions, newest first" in capture(pane)), capture(pane)
    screen = capture(pane)
    assert "fix the median" in screen
    assert "add a CLI" in screen
    tmux("send-keys", "-t", pane, "-l", "CLI", check=True)
    assert wait_for(lambda: "1 of 2 sessions match" in capture(pane)), capture(pane)
    tmux("send-keys", "-t", pane, "Enter", check=True)
    assert wait_for(lambda: "Resumed session 18c0bb02" in capture(pane)), capture(pane)
    assert "The CLI is added." in capture(pane)
    tmux("send-keys", "-t", pane, "C-q", check=True)
    assert wait_for(lambda: "exit 0" in capture(pane)), capture(pane)


def test_escape_in_the_picker_ends_with_exit_0_and_no_session(
    terminal: Callable[..., str], isolated_env: Path, project: Path
) -> None:
    """`chimera --resume`, then escape: the command ends with exit 0 and the sessions are as they were."""
    recorded(isolated_env, project, "18c0aa01", "fix the median", "The median is fixed.")
    before = session_folders(isolated_env)
    pane = terminal("--resume")
    assert wait_for(lambda: "1 session, newest first" in capture(pane)), capture(pane)
    tmux("send-keys", "-t", pane, "Escape", check=True)
    assert wait_for(lambda: "exit 0" in capture(pane)), capture(pane)
    assert session_folders(isolated_env) == before


def test_quitting_the_workbench_before_any_task_leaves_no_session(
    terminal: Callable[..., str], isolated_env: Path
) -> None:
    """`chimera`, then ctrl+q with nothing typed: as many sessions as before (none), and exit 0."""
    pane = terminal()
    assert wait_for(lambda: "Tell Chimera" in capture(pane)), capture(pane)
    tmux("send-keys", "-t", pane, "C-q", check=True)
    assert wait_for(lambda: "exit 0" in capture(pane)), capture(pane)
    assert session_folders(isolated_env) == []


def test_sessions_in_the_workbench_opens_the_chosen_session_next(
    terminal: Callable[..., str], isolated_env: Path, project: Path
) -> None:
    """`/sessions` in a fresh workbench lists the sessions; enter on one closes this workbench (it had no task:
    nothing is left of it) and opens the chosen session with its history."""
    recorded(isolated_env, project, "18c0aa01", "fix the median", "The median is fixed.")
    recorded(isolated_env, project, "18c0bb02", "add a CLI", "The CLI is added.")
    pane = terminal()
    assert wait_for(lambda: "Tell Chimera" in capture(pane)), capture(pane)
    tmux("send-keys", "-t", pane, "-l", "/sessions", check=True)
    tmux("send-keys", "-t", pane, "Enter", check=True)
    assert wait_for(lambda: "2 sessions, newest first" in capture(pane)), capture(pane)
    tmux("send-keys", "-t", pane, "Down", "Enter", check=True)
    assert wait_for(lambda: "Resumed session 18c0aa01" in capture(pane)), capture(pane)
    assert "The median is fixed." in capture(pane)
    assert session_folders(isolated_env) == ["18c0aa01", "18c0bb02"]
    tmux("send-keys", "-t", pane, "C-q", check=True)
    assert wait_for(lambda: "exit 0" in capture(pane)), capture(pane)
