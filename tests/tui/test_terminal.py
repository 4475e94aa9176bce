"""The real `chimera` in a real terminal (tmux): the demo plays, ctrl+q quits, nothing is left running."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.terminal_helpers import Terminal, needs_tmux, wait_for

pytestmark = needs_tmux


tmux = Terminal("chimera-test")  # a private tmux server, apart from the person's own
capture = tmux.capture
session_alive = tmux.alive


def test_demo_in_a_real_terminal(isolated_env: Path) -> None:
    """In tmux, the workbench shows the demo banner, plays to the end, and quits on ctrl+q."""
    session = "demo"
    unset = [f"-u {name}" for name in os.environ if name.startswith("ANTHROPIC_")]
    command = " ".join(
        [
            "exec env",
            *unset,
            shlex.quote(f"CHIMERA_HOME={isolated_env}"),
            *map(shlex.quote, chimera_command()),
        ]
    )
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "40", command, check=True)
    try:
        assert wait_for(lambda: "Demo mode" in capture(session)), capture(session)
        assert wait_for(lambda: "done in 5 turns" in capture(session), timeout=60), capture(session)
        screen = capture(session)
        assert "nothing else changed" in screen
        assert "done · demo (recorded)" in screen  # the turn is left out whole when the pane is narrow
        tmux("send-keys", "-t", session, "C-q", check=True)
        assert wait_for(lambda: not session_alive(session)), "ctrl+q did not quit"
    finally:
        tmux("kill-server")


def test_a_typed_task_shows_its_reply_and_a_folded_call_that_unfolds(isolated_env: Path, tmp_path: Path) -> None:
    """In tmux against the loopback server: a task typed, the reply shown, its read folded to one line;
    tab, the arrows and enter unfold it to the file's lines."""
    (tmp_path / "notes.txt").write_text("".join(f"note number {n}\n" for n in range(5)))
    session = "typed"
    with FakeAnthropic() as api:
        api.script(
            message(tool_use("r1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),
            message(text("The notes count from zero to four.")),
        )
        settings = [f"CHIMERA_HOME={isolated_env}", f"ANTHROPIC_BASE_URL={api.url}", "ANTHROPIC_API_KEY=k"]
        command = " ".join(
            [
                "exec env",
                *[f"-u {name}" for name in os.environ if name.startswith("ANTHROPIC_")],
                "NO_PROXY=127.0.0.1",
                *map(shlex.quote, settings),
                *map(shlex.quote, chimera_command()),
                "--workdir",
                shlex.quote(str(tmp_path)),
                "--permission-mode",
                "bypass",
            ]
        )
        tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", command, check=True)
        try:
            assert wait_for(lambda: "Tell Chimera" in capture(session)), capture(session)
            tmux("send-keys", "-t", session, "-l", "what do the notes say?", check=True)
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(lambda: "count from zero to four" in capture(session)), capture(session)
            screen = capture(session)
            assert "▸ ✓ read  notes.txt" in screen  # folded to its line
            assert "note number 3" not in screen
            tmux("send-keys", "-t", session, "Tab", check=True)  # to the timeline, then its keys, as a person does
            assert wait_for(lambda: "enter fold" in capture(session)), capture(session)
            tmux("send-keys", "-t", session, "Up", "Up", "Up", check=True)
            assert wait_for(lambda: "▌ ▸ ✓ read  notes.txt" in capture(session)), capture(session)
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(lambda: "note number 3" in capture(session)), capture(session)
            assert "▾ ✓ read  notes.txt" in capture(session)
        finally:
            tmux("kill-server")


def test_a_session_that_cannot_open_after_the_first_frame_is_one_line_and_its_exit_code(
    isolated_env: Path, tmp_path: Path
) -> None:
    """The session opens after the first frame; when it cannot (here Chimera's lock folder is a file), the
    workbench ends and the terminal shows the one line naming the cause and the fix, with exit code 2."""
    (isolated_env / "workspaces").write_text("not a folder")
    session = "cannot-open"
    settings = [f"CHIMERA_HOME={isolated_env}", "ANTHROPIC_BASE_URL=http://127.0.0.1:9", "ANTHROPIC_API_KEY=k"]
    command = " ".join(
        [
            "env",
            *[f"-u {name}" for name in os.environ if name.startswith("ANTHROPIC_")],
            *map(shlex.quote, settings),
            *map(shlex.quote, chimera_command()),
            "--workdir",
            shlex.quote(str(tmp_path)),
            "; echo exit=$?; sleep 60",
        ]
    )
    tmux("new-session", "-d", "-s", session, "-x", "80", "-y", "24", command, check=True)
    try:
        assert wait_for(lambda: "exit=" in capture(session)), capture(session)
        lines = [line for line in capture(session).splitlines() if line.strip()]
        assert lines[-1] == "exit=2", lines
        said = "".join("".join(lines[:-1]).split())  # (the line wraps at 80 columns: compared without spaces)
        assert said.startswith("".join(f"chimera: cannot use {isolated_env / 'workspaces'} for".split())), lines
        assert said.endswith("setCHIMERA_HOMEtoafolderyouown"), lines
    finally:
        tmux("kill-server")
