"""The real `chimera` in a real terminal (tmux, a private server) against the loopback Messages API:
`/plan TASK` proposes a plan in its panel, `a` approves it, the steps tick off and the panel folds when done."""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text
from tests.terminal_helpers import Terminal, needs_tmux, wait_for

pytestmark = needs_tmux

tmux = Terminal("chimera-plan-test")  # a private tmux server, apart from the person's own
capture = tmux.capture


def test_plan_approved_to_done_in_a_real_terminal(isolated_env: Path, tmp_path: Path) -> None:
    """80x24: /plan greet shows the plan with its keys beside the task; a approves; both steps tick; the panel
    folds to one line saying the plan is done, and the run ends done."""
    session = "plan"
    with FakeAnthropic() as api:
        api.script(
            message(text("- [ ] say `hello`\n- [ ] say **bye**")),
            message(text("Hello.")),
            message(text("DONE")),
            message(text("Bye.")),
            message(text("DONE")),
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
            tmux("send-keys", "-t", session, "-l", "/plan greet", check=True)
            tmux("send-keys", "-t", session, "Enter", check=True)
            assert wait_for(lambda: "a approve · e edit · k keep planning · c cancel" in capture(session)), capture(
                session
            )
            screen = capture(session)
            assert "The plan (2 steps): approve it?" in screen
            assert "☐ 1. say hello" in screen  # backticks drawn, not shown
            assert "☐ 2. say bye" in screen
            assert "greet" in screen  # the conversation stays
            tmux("send-keys", "-t", session, "C-y", check=True)  # to the plan: it never takes the focus itself
            tmux("send-keys", "-t", session, "a", check=True)
            assert wait_for(lambda: "The plan (2 steps) done" in capture(session)), capture(session)
            screen = capture(session)
            assert "☐ 1. say hello" not in screen  # folded to its line
            assert "a approve" not in screen
            status_done = lambda: any(line.startswith(" done · ") for line in capture(session).splitlines())  # noqa: E731
            assert wait_for(status_done), capture(session)
            tmux("send-keys", "-t", session, "C-q", check=True)
            assert wait_for(lambda: tmux("has-session", "-t", session).returncode != 0), "ctrl+q did not quit"
        finally:
            tmux("kill-server")
    assert len(api.requests) == 5
