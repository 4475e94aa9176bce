"""A plan run read back shows its plan as the live run did: resumed in the workbench, exported, in `chimera tree`
and replayed, the plan is its checklist with its ticks (a failed check's words stay), never the model's raw
`- [ ]` answer or its `DONE` for a step, from the session's records alone as well as with its event log.

Plan runs recorded by the real `chimera run --loop plan --json` against the loopback Messages API.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from chimera.core.events import event_from_dict
from chimera.core.sessions.files import EVENTS
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.start import RunOptions
from chimera.core.sessions.store import SessionStore
from chimera.tui.app import build_app
from chimera.tui.state.workbench import WorkbenchState
from tests.cli_runner import run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.tui_helpers import entries, screen_text

PLAN = "- [ ] Write `out.txt` saying hello\n- [ ] Add a second line to `out.txt`\n"
STEPS = ["Write `out.txt` saying hello", "Add a second line to `out.txt`"]
FAILED = "NOT DONE: out.txt is empty"
EDITED = "hello\nworld\n"


def checked_twice() -> list[Any]:
    """A plan of two steps; the first fails the model's check once, then both pass."""
    return [
        message(tool_use("p1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),
        message(text(PLAN)),
        message(tool_use("w1", "write", {"path": "out.txt", "content": "hello\n"}), stop_reason="tool_use"),
        message(text("Step 1 is done.")),
        message(text(FAILED)),
        message(text("Step 1 is done now.")),
        message(text("DONE")),
        message(tool_use("e1", "edit", {"path": "out.txt", "old": "hello\n", "new": EDITED}), stop_reason="tool_use"),
        message(text("Step 2 is done.")),
        message(text("DONE")),
    ]  # fmt: skip


def plan_run(project: Path, env: dict[str, str], *flags: str) -> str:
    """Run ``write out.txt`` with the plan loop; the session's id."""
    (project / "notes.txt").write_text("the notes\n")
    proc = run_here(
        "run", "write out.txt", "--workdir", str(project), "--loop", "plan", "--json",
        "--permission-mode", "bypass", *flags, env=env,
    )  # fmt: skip
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    return str(events[0]["session_id"])


def without_log(home: Path, session_id: str) -> None:
    """The session's event log is gone: only its records are left."""
    with SessionStore.open(home, session_id, writable=False) as store:
        (store.folder / EVENTS).unlink()


def raw_plan_words(lines: list[str]) -> list[str]:
    """The lines that show the model's raw checklist or a bare verdict (what the plan should show instead)."""
    return [line for line in lines if "[ ]" in line or "[x]" in line or line.strip().strip("│ ") == "DONE"]


@pytest.fixture(params=["with its log", "from its records alone"])
def recorded(
    request: pytest.FixtureRequest, api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> str:
    """A plan run whose first step failed its check once, recorded; read back with its event log, or without."""
    api.script(*checked_twice())
    session_id = plan_run(project, model_env, "--approve-plan")
    if request.param == "from its records alone":
        without_log(isolated_env, session_id)
    return session_id


@pytest.mark.usefixtures("model_env")
async def test_a_resumed_plan_run_shows_the_checklist_ticked_not_the_raw_answers(recorded: str) -> None:
    """`chimera --resume ID`: the plan shows once, both steps ticked, the failed check's words kept; no raw
    `- [ ]` list, no `DONE` line."""
    app = build_app(RunOptions(resume=recorded, model=MODEL))
    async with app.run_test(size=(120, 60)) as pilot:
        await app.history_shown.wait()
        await pilot.pause()
        shown = screen_text(app)
        (plan,) = entries(app, "plan")
        assert (plan.steps, plan.checks) == (STEPS, [True, True])
        assert "☑ Write out.txt saying hello" in shown
        assert "☑ Add a second line to out.txt" in shown
        assert FAILED in shown  # a failed check's words stay
        assert raw_plan_words(shown.splitlines()) == []
        assert [e.text for e in entries(app, "text")] == [
            "Step 1 is done.",
            FAILED,
            "Step 1 is done now.",
            "Step 2 is done.",
        ]


def test_an_exported_plan_run_shows_the_checklist_ticked_not_the_raw_answers(recorded: str) -> None:
    """`chimera export ID`: the plan once, each step marked as its checks left it; the loop's notes in a line."""
    exported = run_here("export", recorded).stdout
    lines = exported.splitlines()
    assert lines.count("**The plan:**") == 1
    assert "- ☑ Write `out.txt` saying hello" in lines
    assert "- ☑ Add a second line to `out.txt`" in lines
    assert FAILED in lines
    assert "> *The loop:* step 2 of 2: Add a second line to `out.txt`" in lines
    assert raw_plan_words(lines) == []


def test_chimera_tree_shows_the_plan_and_each_verdict_as_the_plan_does(recorded: str) -> None:
    """`chimera tree ID`: the plan's node says its steps, each verdict's node its step's mark; no `- [ ]`, no `DONE`."""
    lines = run_here("tree", recorded).stdout.splitlines()
    assert any("[plan] ☐ Write `out.txt` saying hello ☐ Add a se" in line for line in lines)
    assert any(line.endswith(f"☒ step 1: {FAILED}") for line in lines)
    assert sum("☑ step 1: Write `out.txt` saying hello" in line for line in lines) == 1
    assert sum("☑ step 2: Add a second line to `out.txt`" in line for line in lines) == 1
    assert raw_plan_words(lines) == []
    document = json.loads(run_here("tree", recorded, "--json").stdout)
    assert raw_plan_words([node["summary"] for node in document["nodes"]]) == []


def test_a_replayed_plan_run_plays_every_step_and_its_plan(recorded: str) -> None:
    """`chimera replay ID --json`: the whole run plays (it used to stop at the plan), publishing the plan and its
    checks as the run did."""
    proc = run_here("replay", recorded, "--json")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    assert [e["steps"] for e in events if e["type"] == "plan_proposed"] == [STEPS]
    assert kinds.count("plan_approved") == 1
    checks = [(e["index"], e["passed"]) for e in events if e["type"] == "plan_step_checked"]
    assert checks == [(0, False), (0, True), (1, True)]
    assert kinds.count("message_completed") == 10
    (finished,) = [e for e in events if e["type"] == "run_finished"]
    assert finished["success"] is True


def plan_events(events: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """What the plan's events say, in order: the steps of each plan, each check (step, passed, attempt), a cancel."""
    said: list[tuple[Any, ...]] = []
    for event in events:
        match event["type"]:
            case "plan_proposed" | "plan_approved" | "plan_edited":
                said.append((event["type"], event["steps"]))
            case "replanned":
                said.append(("replanned", event["steps"], event["why"]))
            case "plan_step_checked":
                said.append(("checked", event["index"], event["passed"], event["attempt"], event["detail"].strip()))
            case "plan_cancelled":
                said.append(("cancelled", event["reason"]))
    return said


def told_again(home: Path, session_id: str) -> tuple[list[dict[str, Any]], WorkbenchState]:
    """The session's history as the workbench tells it on resume: its events as JSON, and the state they make."""
    with SessionStore.open(home, session_id, writable=False) as store:
        events = branch_events(store)
    state = WorkbenchState()
    state.tell(events)
    return [event.to_dict() for event in events], state


def live_run(api: FakeAnthropic, env: dict[str, str], project: Path, *flags: str) -> list[dict[str, Any]]:
    proc = run_here(
        "run", "summarize the notes", "--workdir", str(project), "--loop", "plan", "--json",
        "--permission-mode", "bypass", *flags, env=env,
    )  # fmt: skip
    return [json.loads(line) for line in proc.stdout.splitlines()]


@pytest.mark.parametrize("log", [True, False])
def test_a_run_checked_by_a_command_reads_back_as_it_ran(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, log: bool
) -> None:
    """--verify: a failed check is read from the note that says so, a pass from the next step's; the last step's
    pass only the event log holds."""
    api.script(
        message(text("- [ ] Create `out.txt`\n- [ ] Say it is there")),
        message(text("Done, I think.")),  # nothing written: the check fails
        message(tool_use("w1", "write", {"path": "out.txt", "content": "x\n"}), stop_reason="tool_use"),
        message(text("Now it is done.")),
        message(text("It is there.")),
    )
    live = live_run(api, model_env, project, "--approve-plan", "--verify", "test -f out.txt")
    assert live[-1]["success"] is True
    if not log:
        without_log(isolated_env, live[0]["session_id"])
    history, state = told_again(isolated_env, live[0]["session_id"])

    expected = plan_events(live)
    if not log:  # the records name no command, keep no output of a pass, and hold nothing after the last step
        expected = [(*e[:4], "") if e[0] == "checked" and e[2] else e for e in expected][:-1]
    assert plan_events(history) == expected
    assert (state.plan.checks, state.plan.phase) == ([True, True] if log else [True, None], "over")
    (plan,) = [e for e in state.transcript.entries if e.kind == "plan"]
    assert plan.checks == state.plan.checks


@pytest.mark.parametrize("log", [True, False])
def test_a_replanned_run_reads_back_with_its_revision_and_the_ticks_it_kept(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, log: bool
) -> None:
    """A file the plan names goes missing after step 1 (the check command removes it): history tells the revised
    plan with step 1 still ticked, and the model's revised list gives way to it, live and read back alike."""
    (project / "notes.txt").write_text("the notes\n")
    api.script(
        message(text("- [ ] Read `notes.txt`\n- [ ] Summarize `notes.txt` into `summary.txt`")),
        message(text("Read it.")),
        message(text("- [ ] Write `summary.txt` saying the notes are gone")),  # the revised steps
        message(tool_use("w1", "write", {"path": "summary.txt", "content": "gone\n"}), stop_reason="tool_use"),
        message(text("Written.")),
    )
    live = live_run(api, model_env, project, "--approve-plan", "--verify", "rm -f notes.txt")
    assert live[-1]["success"] is True
    if not log:
        without_log(isolated_env, live[0]["session_id"])
    history, state = told_again(isolated_env, live[0]["session_id"])

    revised = ["Read `notes.txt`", "Write `summary.txt` saying the notes are gone"]
    said = plan_events(history)
    assert ("replanned", revised, "notes.txt, which the plan names, is missing") in said
    expected = plan_events(live)
    if not log:
        expected = [(*e[:4], "") if e[0] == "checked" and e[2] else e for e in expected][:-1]
    assert said == expected
    shown = WorkbenchState()
    shown.apply_all(event_from_dict(event) for event in live)
    for told in (shown, state):  # live, and read back
        plans = [(e.steps, e.checks) for e in told.transcript.entries if e.kind == "plan"]
        assert plans[1] == (revised, [True, True] if told is shown or log else [True, None])
        assert [e.text for e in told.transcript.entries if e.kind == "text"] == ["Read it.", "Written."]


def test_a_plan_cancelled_reads_back_cancelled_with_its_log_and_as_proposed_without(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """Headless without --approve-plan: resumed, exported and replayed, the plan shows once and says it was
    cancelled and why; without the log the records say only that it was proposed."""
    api.script(message(text(PLAN)))
    live = live_run(api, model_env, project)
    session_id = live[0]["session_id"]
    history, state = told_again(isolated_env, session_id)
    assert plan_events(history) == plan_events(live)
    assert state.plan.phase == "cancelled"
    notices = [e.text for e in state.transcript.entries if e.kind == "notice"]
    cancelled = [text for text in notices if "cancelled" in text]
    assert len(cancelled) == 1  # said once, by the run's end, with why
    assert cancelled[0].startswith("⊘ the plan was cancelled: ")
    assert "--approve-plan" in cancelled[0]
    exported = run_here("export", session_id).stdout
    assert "- ☐ Write `out.txt` saying hello" in exported
    assert "*(plan cancelled\\: the plan needs approval" in exported  # escaped, as Markdown shows it
    assert raw_plan_words(exported.splitlines()) == []
    replayed = run_here("replay", session_id, "--json")
    assert replayed.returncode == 0, replayed.stderr
    assert plan_events([json.loads(line) for line in replayed.stdout.splitlines()]) == plan_events(live)

    without_log(isolated_env, session_id)
    history, state = told_again(isolated_env, session_id)
    assert plan_events(history) == [("plan_proposed", STEPS)]
    assert (state.plan.steps, state.plan.phase) == (STEPS, "over")


@pytest.mark.parametrize("log", [True, False])
def test_a_check_that_never_gave_its_verdict_reads_back_failed(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, log: bool
) -> None:
    """The model's check looks around until its turns run out, with no verdict: read back, the step failed its
    check saying so, as it did live."""
    (project / "notes.txt").write_text("the notes\n")
    look = [message(tool_use(f"r{i}", "read", {"path": "notes.txt"}), stop_reason="tool_use") for i in range(3)]
    api.script(
        message(text("- [ ] Look at `notes.txt`")),
        message(text("Looked.")),
        *look,  # the check: three turns of reading, no answer
        message(text("Looked again.")),
        message(text("DONE")),
    )
    live = live_run(api, model_env, project, "--approve-plan")
    assert live[-1]["success"] is True
    if not log:
        without_log(isolated_env, live[0]["session_id"])
    history, state = told_again(isolated_env, live[0]["session_id"])
    said = plan_events(history)
    assert said == plan_events(live)
    assert said[2] == ("checked", 0, False, 1, "the check of step 1 took more than 3 turns")
    assert state.plan.checks == [True]
