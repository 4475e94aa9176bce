"""The workbench's first frame waits only for what it draws: what is loaded by then is checked, not timed.

Each test starts a new interpreter, as the ``chimera`` command does (the collector paused first thing), and runs
the workbench on a fresh workspace (a model configured, so it opens on its welcome) to its first frame, the
session opening after it as the command has it (``open_later``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

# Loaded only once they are needed, each well after the first frame; every one took time before it.
NOT_BEFORE_THE_FIRST_FRAME = (
    "anthropic",  # the SDK: with the first request
    "markdown_it",  # Markdown: with the first answer drawn (tui.code_markdown)
    "pygments",  # code's colours: with the first code drawn (Look.syntax)
    "rich.syntax",
    "watchfiles",  # the theme files' watch: started after the first frame
    "anyio",
    "urllib.request",  # a server's first bytes looked at: a rare failure
    "chimera.core.compare",  # /compare
    "chimera.tui.screens.compare",
    "chimera.tui.screens.sessions",  # /sessions
    "chimera.core.sessions.export",  # /export
    "chimera.core.loops.plan_execute",  # strategies other than the one asked for
    "chimera.core.loops.reflexion",
    "chimera.core.loops.tree_of_thought",
    "textual.widgets._text_area",  # the plan's editor: with the first edit
    # The session and what drives it: opened after the first frame (``core.sessions.opening``).
    "chimera.core.events",  # the events: with the first one (the state's reducers import them then)
    "chimera.core.sessions.session",
    "chimera.core.sessions.start",
    "chimera.core.sessions.store",
    "chimera.core.agent",
    "chimera.core.agent_loop",
    "chimera.core.bus",
    "chimera.core.tools.executor",
    "chimera.core.tool_group",
    "chimera.core.providers.anthropic",  # the provider (the SDK itself later still: with the first request)
    "chimera.core.demo",
    "chimera.core.permissions.policy",  # the policy and its shell parsing (the modes' names: core.option_names)
    "chimera.core.loop_config",
    "chimera.core.providers.base",
    # The workbench's parts and panels: made as the session opens.
    "chimera.tui.workbench.conversation",
    "chimera.tui.workbench.command_runner",
    "chimera.tui.widgets.transcript_view",
    "chimera.tui.widgets.plan_panel",
    "chimera.tui.widgets.question_panel",
    "chimera.tui.widgets.tree_panel",
)

FIRST_FRAME = """
import gc, json, sys
from pathlib import Path

from chimera.core.gc_pause import pause_until_started

if sys.argv[2] == "paused":
    pause_until_started()  # as the chimera command does, first thing
from textual.app import App

from chimera.core.sessions.opening import RunOptions
from chimera.tui.app import build_app

seen = {}
display = App._display  # where a frame goes to the terminal


def first_frame(self, screen, renderable):
    display(self, screen, renderable)
    if renderable is not None and not self._batch_count and not seen:
        seen["loaded"] = sorted(sys.modules)
        seen["welcome"] = bool(self.query("#welcome"))
        self.call_after_refresh(self.exit)


App._display = first_frame
build_app(RunOptions(workdir=Path(sys.argv[1])), open_later=True).run(headless=True, size=(120, 40))
seen["collecting"] = gc.isenabled()
print(json.dumps(seen))
"""


def _to_first_frame(workdir: Path, *, paused: bool = True) -> dict[str, Any]:
    """Run the workbench in a new interpreter to its first frame (and the next), then quit; what it saw.
    ``paused``: the collector paused first, as the ``chimera`` command does (else as when the app is a library)."""
    env = {**os.environ, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9", "ANTHROPIC_API_KEY": "k"}
    script = [sys.executable, "-c", FIRST_FRAME, str(workdir), "paused" if paused else "collecting"]
    out = subprocess.run(script, capture_output=True, text=True, env=env, timeout=60)
    assert out.returncode == 0, out.stderr
    seen: dict[str, Any] = json.loads(out.stdout.splitlines()[-1])
    seen["stderr"] = out.stderr
    return seen


def test_the_first_frame_is_drawn_before_what_it_does_not_draw_is_loaded(tmp_path: Path) -> None:
    """The welcome is on the first frame, and nothing only a later step needs (the session and its agent, the
    workbench's parts and panels, the SDK, Markdown, code's colours, the theme watch, the comparisons, the pickers,
    other strategies, the plan's editor) was loaded to draw it."""
    seen = _to_first_frame(tmp_path)
    assert seen["welcome"]
    loaded = set(seen["loaded"])
    assert [name for name in NOT_BEFORE_THE_FIRST_FRAME if name in loaded] == []


def test_the_collector_paused_while_starting_runs_again_after_the_first_frame(tmp_path: Path) -> None:
    """The cyclic garbage collector, paused while the workbench starts, runs again once it is on screen."""
    assert _to_first_frame(tmp_path)["collecting"] is True


def test_quitting_as_the_first_frame_shows_leaves_nothing_on_the_terminal(tmp_path: Path) -> None:
    """Closed right after its first frame (before the theme watch has started), the workbench prints nothing
    more: no warning about work never started (with the collector running, as when the app is a library)."""
    assert _to_first_frame(tmp_path, paused=False)["stderr"] == ""
