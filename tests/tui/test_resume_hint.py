"""After the real `chimera` quits in a terminal (tmux), it says how to come back to the session: one line,
only when the session was kept (a quit before any task keeps none)."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.terminal_helpers import Terminal, needs_tmux, wait_for

pytestmark = needs_tmux

tmux = Terminal("chimera-hint")  # a private tmux server, apart from the person's own
pane_dead = tmux.pane_dead


def capture(session: str) -> str:
    return tmux.capture(session, history=True)


def start(session: str, home: Path, workdir: Path, model_env: dict[str, str]) -> None:
    """The real chimera in a 80x24 pane that stays on screen after it exits (to read what it printed)."""
    settings = [f"CHIMERA_HOME={home}", "NO_PROXY=127.0.0.1", *(f"{k}={v}" for k, v in model_env.items())]
    command = " ".join(
        [
            "exec env",
            *[f"-u {name}" for name in os.environ if name.startswith("ANTHROPIC_")],
            *map(shlex.quote, settings),
            *map(shlex.quote, chimera_command()),
            "--workdir",
            shlex.quote(str(workdir)),
        ]
    )
    tmux("-f", "/dev/null", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", check=True)
    tmux("set-option", "-t", session, "remain-on-exit", "on", check=True)
    tmux("respawn-pane", "-k", "-t", session, command, check=True)


def test_quitting_after_a_task_says_how_to_resume(
    api: FakeAnthropic, model_env: dict[str, str], isolated_env: Path, project: Path
) -> None:
    """A task done, ctrl+q: the terminal shows `Resume this session: chimera --resume ID` with the session's id."""
    api.script(message(text("Hello there.")))
    try:
        start("hint", isolated_env, project, model_env)
        assert wait_for(lambda: "Tell Chimera" in capture("hint")), capture("hint")
        tmux("send-keys", "-t", "hint", "-l", "say hello", check=True)
        tmux("send-keys", "-t", "hint", "Enter", check=True)
        assert wait_for(lambda: "Hello there." in capture("hint")), capture("hint")
        tmux("send-keys", "-t", "hint", "C-q", check=True)
        assert wait_for(lambda: pane_dead("hint")), capture("hint")
        (session_id,) = [p.name for p in (isolated_env / "sessions").iterdir()]
        assert f"Resume this session: chimera --resume {session_id}" in capture("hint")
    finally:
        tmux("kill-server")


def test_quitting_before_any_task_says_nothing_of_resuming(
    api: FakeAnthropic, model_env: dict[str, str], isolated_env: Path, project: Path
) -> None:
    """Opened and quit at once: no session was kept, so there is nothing to resume and no line says so."""
    try:
        start("none", isolated_env, project, model_env)
        assert wait_for(lambda: "Tell Chimera" in capture("none")), capture("none")
        tmux("send-keys", "-t", "none", "C-q", check=True)
        assert wait_for(lambda: pane_dead("none")), capture("none")
        assert "Resume this session" not in capture("none")
    finally:
        tmux("kill-server")
