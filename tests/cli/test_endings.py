"""How a run ended, in words: a cancelled plan is cancelled, a replay played to where its recording stops is
finished, and `chimera sessions` says how each session's last run ended; never an internal code on screen."""

from __future__ import annotations

import json
from pathlib import Path

from chimera.core.events import RunStarted
from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.store import SessionStore
from chimera.tui.app import build_app
from chimera.tui.replay_app import ReplayApp
from chimera.tui.widgets.plan_panel import PlanPanel
from chimera.tui.widgets.status_line import StatusLine
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import answering, screen_text, send, until

PLAN = "Here is the plan:\n\n- [ ] Write `out.txt` saying hello\n"
CODES = ("plan_cancelled", "recording_ended", "max_turns")


def sessions_listed() -> tuple[str, list[dict[str, object]]]:
    shown = run_here("sessions")
    listed = run_here("sessions", "--json")
    assert shown.returncode == listed.returncode == 0, shown.stderr + listed.stderr
    return shown.stdout, json.loads(listed.stdout)


def test_a_headless_plan_left_unapproved_ends_cancelled(
    api: FakeAnthropic, project: Path, model_env: dict[str, str]
) -> None:
    """`chimera run --loop plan` without --approve-plan: stderr says the plan was cancelled and why, in words;
    `chimera sessions` lists the run as cancelled."""
    api.script(message(text(PLAN)))
    proc = run_here("run", "write out.txt", "--workdir", str(project), "--loop", "plan", env=model_env)
    assert proc.returncode == 1
    line, kept = proc.stderr.strip().splitlines()[-2:]  # then the session it kept
    assert line.startswith("chimera: the plan was cancelled:")
    assert kept.startswith("chimera: session ")
    assert "--approve-plan" in line
    assert not any(code in proc.stderr for code in CODES)
    shown, listed = sessions_listed()
    assert "last run cancelled: the plan was cancelled" in shown
    assert listed[0]["last_run"] == {"state": "cancelled", "why": "the plan was cancelled"}


def test_a_run_at_the_turn_limit_is_listed_as_failed_in_words(
    api: FakeAnthropic, project: Path, model_env: dict[str, str]
) -> None:
    """A run stopped by --max-turns: `chimera sessions` says it reached the turn limit, not `max_turns`."""
    api.script(message(tool_use("g1", "glob", {"pattern": "*"}), stop_reason="tool_use"))
    proc = run_here("run", "look", "--workdir", str(project), "--max-turns", "1", env=model_env)
    assert proc.returncode == 1
    assert "max_turns" not in proc.stderr
    shown, listed = sessions_listed()
    assert "last run failed: it reached the turn limit" in shown
    assert listed[0]["last_run"] == {"state": "failed", "why": "it reached the turn limit"}


def test_a_run_that_never_ended_is_listed_unfinished(isolated_env: Path, project: Path) -> None:
    """A session whose log shows a run start and no end (the process was killed): listed as unfinished."""
    with SessionStore.create(isolated_env, "killed", workdir=project, model="m") as store:
        store.add("user", {"role": "user", "content": "go"})
        store.sync()
    started = RunStarted(run_id="r", session_id="killed", seq=1, ts=1.0, task="go", model="m", loop="react")
    (isolated_env / "sessions" / "killed" / "events.jsonl").write_text(started.to_json() + "\n")
    shown, listed = sessions_listed()
    assert "last run unfinished" in shown
    assert listed[0]["last_run"]["state"] == "unfinished"  # type: ignore[index]


async def test_cancelling_a_plan_in_the_workbench_ends_it_cancelled(
    api: FakeAnthropic, project: Path, model_env: dict[str, str]
) -> None:
    """`c` on a proposed plan: the status line says cancelled and the conversation says so in words, no ✗."""
    api.script(message(text(PLAN)))
    app = build_app(RunOptions(workdir=project, loop="plan", permission_mode="bypass"))
    async with app.run_test(size=(100, 30)) as pilot:
        await send(pilot, "write out.txt")
        await until(pilot, lambda: "Write out.txt" in screen_text(app), "the plan on screen")
        await answering(pilot, app, PlanPanel)  # the person moves to it
        await pilot.press("c", "y")  # c asks once
        await app.run_shown.wait()
        await until(pilot, lambda: "the plan was cancelled" in screen_text(app), "the ending on screen")
        shown = screen_text(app)
        assert app.query_one(StatusLine).state == "cancelled"
        assert "✗" not in shown
        assert not any(code in shown for code in CODES)


async def test_a_replay_played_to_where_its_recording_stops_ends_finished(isolated_env: Path, project: Path) -> None:
    """A session killed mid-call, replayed: it ends where the recording stops, shown as finished, not failed."""
    with SessionStore.create(isolated_env, "cut", workdir=project, model="m") as store:
        store.add("user", {"role": "user", "content": "count the files"})
        use = {"type": "tool_use", "id": "g1", "name": "glob", "input": {"pattern": "*"}}
        store.add("assistant", {"role": "assistant", "content": [use]})
        store.sync()
    app = ReplayApp("cut")
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, lambda: app.ended, "the replay's end")
        await until(pilot, lambda: "recording" in screen_text(app), "the ending on screen")
        shown = screen_text(app)
        assert app.query_one(StatusLine).state == "done"
        assert "✗" not in shown
        assert not any(code in shown for code in CODES)
