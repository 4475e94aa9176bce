""" "Always allow edits" means every edit: given on an ``edit`` it covers ``write`` too, and the other way
round, in the workbench and over the control channel; the prompt's words say what it covers.

The workbench with Textual's Pilot, and the real ``chimera run --control -``, against the loopback
Messages API.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from chimera.core.events import PermissionRequested
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from tests.cli_runner import chimera_command
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, Reply, message, text, tool_use
from tests.tui_helpers import answering, screen_text, until

EDIT = ("edit", {"path": "a.txt", "old": "a", "new": "A"})
WRITE = ("write", {"path": "b.txt", "content": "b\n"})


def two_changes(first: tuple[str, dict[str, Any]], then: tuple[str, dict[str, Any]]) -> list[Reply]:
    return [
        message(tool_use("c1", first[0], first[1]), stop_reason="tool_use"),
        message(tool_use("c2", then[0], then[1]), stop_reason="tool_use"),
        message(text("Both done.")),
    ]


def changed(project: Path) -> tuple[str, str | None]:
    b = project / "b.txt"
    return (project / "a.txt").read_text(), b.read_text() if b.exists() else None


@pytest.mark.parametrize(("first", "then"), [(EDIT, WRITE), (WRITE, EDIT)], ids=["edit-then-write", "write-then-edit"])
async def test_always_allow_edits_in_the_workbench_covers_write_and_edit(
    api: FakeAnthropic,
    model_env: dict[str, str],
    project: Path,
    first: tuple[str, dict[str, Any]],
    then: tuple[str, dict[str, Any]],
) -> None:
    """`a a` on the prompt "Always allow edits" for one edit tool: the other one runs next without a question."""
    (project / "a.txt").write_text("a\n")
    api.script(*two_changes(first, then))
    app = build_app(RunOptions(workdir=project, model=DEFAULT_MODEL, permission_mode="ask"))
    asked: list[PermissionRequested] = []
    app.session.bus.subscribe(lambda e: asked.append(e) if isinstance(e, PermissionRequested) else None)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.click("#prompt")
        await pilot.press(*"change both files", "enter")
        await answering(pilot, app)
        await until(pilot, lambda: "a always" in screen_text(app), "asked")
        assert "a adds the rule edit, write" in screen_text(app)
        await pilot.press("a", "a")  # the rule shown, then kept
        await until(pilot, lambda: app.run_shown.is_set() or len(asked) > 1, "the run's end, or a second question")
        assert [e.name for e in asked] == [first[0]]  # asked once, for the first change only
        await app.run_shown.wait()
    assert changed(project) == ("A\n", "b\n")


def test_always_over_the_control_channel_covers_both_edit_tools(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A script's "always" on an edit lets the following write run unasked, as in the workbench."""
    (project / "a.txt").write_text("a\n")
    api.script(*two_changes(EDIT, WRITE))
    command = [*chimera_command(), "run", "change both files", "--json", "--control", "-", "--workdir", str(project)]
    events: list[dict[str, Any]] = []
    with subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        env={**os.environ, **model_env},
    ) as proc:  # fmt: skip
        assert proc.stdin is not None
        assert proc.stdout is not None
        try:
            for line in proc.stdout:
                event = json.loads(line)
                events.append(event)
                if event["type"] == "permission_requested":
                    answer = {"type": "permission", "request_id": event["request_id"], "decision": "always"}
                    proc.stdin.write(json.dumps(answer) + "\n")
                    proc.stdin.flush()
                if event["type"] == "run_finished":
                    proc.stdin.close()
            assert proc.wait(timeout=30) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
    assert [e["name"] for e in events if e["type"] == "permission_requested"] == ["edit"]
    assert changed(project) == ("A\n", "b\n")
