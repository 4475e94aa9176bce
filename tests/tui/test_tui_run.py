"""The workbench during a live run: permission prompts, interrupting, and retries on screen."""

from __future__ import annotations

import asyncio
import json
import os
import re
import threading
from pathlib import Path

import pytest

from chimera.core.events import SteeringDelivered, StepEvent, ToolCallStarted, UsageReported
from chimera.core.runner import AgentResult
from chimera.core.sessions.reading import read_node, summary
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import build_app
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.widgets.status_line import StatusLine
from chimera.tui.workbench import conversation
from tests.fake_anthropic import FakeAnthropic, message, paused, stream_error, text, thinking, tool_use
from tests.tui_helpers import asked, entries, said, screen_text, send, toasts, until


def touch_then_answer() -> tuple[object, object]:
    return (
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("Finished.")),
    )


@pytest.mark.parametrize(("key", "made"), [("y", True), ("n", False)])
@pytest.mark.usefixtures("model_env")
async def test_permission_prompt_allows_or_denies_a_command(
    api: FakeAnthropic, tmp_path: Path, key: str, made: bool
) -> None:
    """In ask mode a command waits for the person: y runs it, n refuses it and the model is told."""
    api.script(*touch_then_answer())
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "make the file")
        assert "touch made-it" in await asked(pilot, app)
        assert not (tmp_path / "made-it").exists()  # nothing runs before the answer
        await pilot.press(key)
        await app.run_shown.wait()
        await pilot.pause()
        assert (tmp_path / "made-it").exists() is made
        (call,) = entries(app, "tool")
        assert (call.status == "failed") is not made
        tool_result = api.requests[1].messages[-1]["content"][0]
        assert (tool_result["is_error"], "declined" in tool_result["content"]) == (not made, not made)


@pytest.mark.usefixtures("model_env")
async def test_a_run_stopped_while_asking_closes_the_prompt(api: FakeAnthropic, tmp_path: Path) -> None:
    """When the run stops with the question open (interrupted, out of time), the prompt closes unanswered."""
    api.script(*touch_then_answer())
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "make the file")
        await asked(pilot, app)
        app.session.interrupt()
        await app.run_shown.wait()
        await until(pilot, lambda: not app.query_one(QuestionPanel).has_class("-shown"), "the question to close")
        assert not (tmp_path / "made-it").exists()
        assert "interrupted" in screen_text(app)


@pytest.mark.usefixtures("model_env")
async def test_always_allow_stops_asking_for_the_same_command(api: FakeAnthropic, tmp_path: Path) -> None:
    """Answering 'always' runs the command and the same command later runs without a prompt."""
    api.script(
        message(tool_use("t1", "bash", {"command": "echo hi >> log"}), stop_reason="tool_use"),
        message(tool_use("t2", "bash", {"command": "echo hi >> log"}), stop_reason="tool_use"),
        message(text("Twice.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "log twice")
        await asked(pilot, app)
        await pilot.press("a", "a")  # the rule shown, then kept
        await app.run_shown.wait()
        await pilot.pause()
        assert (tmp_path / "log").read_text() == "hi\nhi\n"
        assert app.query_one(StatusLine).state == "done"


@pytest.mark.usefixtures("model_env")
async def test_the_prompt_says_why_a_command_that_hides_what_it_runs_is_asked(
    api: FakeAnthropic, tmp_path: Path
) -> None:
    """An allow rule never covers `eval …`: the prompt shows it is asked for that reason, and the reason is an event."""
    api.script(
        message(tool_use("t1", "bash", {"command": "eval touch made-it"}), stop_reason="tool_use"),
        message(text("Finished.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", allow=("bash(eval *)",)))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "make the file")
        shown = await asked(pilot, app)
        assert "Asked because eval runs its words as a command, which no allow rule covers." in shown
        await pilot.press("y")
        await app.run_shown.wait()
        assert (tmp_path / "made-it").exists()


@pytest.mark.usefixtures("model_env")
async def test_escape_interrupts_a_running_command(api: FakeAnthropic, tmp_path: Path) -> None:
    """Escape stops the run: the command is killed, shown cancelled after its time, the run said interrupted once."""
    api.script(message(tool_use("t1", "bash", {"command": "sleep 300"}), stop_reason="tool_use"))
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    started: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: started.append(e) if isinstance(e, ToolCallStarted) else None)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "wait a while")
        await until(pilot, lambda: bool(started) and bool(entries(app, "tool")), "the command to start")
        await pilot.press("escape")
        await app.run_shown.wait()
        await pilot.pause()
        (call,) = entries(app, "tool")
        assert call.status == "cancelled"
        assert call.output.startswith("Cancelled")
        shown = screen_text(app)
        assert "⏹ interrupted" in shown
        assert "the run was interrupted" not in shown  # said once, by the notice
        assert "failed" not in shown  # the person's own doing is no failure
        assert re.search(r"cancelled after \d+\.\d\ds", shown), shown
        assert "0.00s" not in shown
        assert app.query_one(StatusLine).state == "interrupted"
        assert not app.running


@pytest.mark.usefixtures("model_env")
async def test_typing_while_a_command_runs_steers_the_next_step(api: FakeAnthropic, tmp_path: Path) -> None:
    """Words sent while a tool runs reach the model once: after the tool's result, before its next request."""
    fifo = tmp_path / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"),
        message(text("Looked at b too.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    delivered: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: delivered.append(e) if isinstance(e, SteeringDelivered) else None)
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "look at a")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await send(pilot, "also look at b")
        assert app.query_one(PromptInput).value == ""
        await asyncio.to_thread(fifo.write_text, "done\n")  # the command ends
        await app.run_shown.wait()
        await app.session.bus.drain()
    sent = api.requests[1].messages[-1]["content"]
    assert [b["type"] for b in sent] == ["tool_result", "text"]
    assert sent[1]["text"].endswith("also look at b</system-reminder>")
    assert json.dumps([r.messages for r in api.requests]).count("also look at b") == 1
    assert [e.text for e in delivered] == ["also look at b"]  # type: ignore[attr-defined]


@pytest.mark.usefixtures("model_env")
async def test_an_interrupt_gives_the_unsent_words_back_to_the_input(api: FakeAnthropic, tmp_path: Path) -> None:
    api.script(message(tool_use("t1", "bash", {"command": "sleep 300"}), stop_reason="tool_use"))
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "wait a while")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await send(pilot, "actually, stop and do b")
        await pilot.press("escape")
        await app.run_shown.wait()
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        assert prompt.value == "[steering: actually, stop and do b]"  # one piece, marked for what it was
        assert prompt.whole(prompt.value) == "actually, stop and do b"
    assert len(api.requests) == 1  # the words never reached the model


@pytest.mark.usefixtures("model_env")
async def test_a_retried_attempt_leaves_no_partial_thinking_or_text(api: FakeAnthropic, tmp_path: Path) -> None:
    """When a stream fails mid-way and is retried, only the successful attempt stays on screen."""
    api.script(
        stream_error(thinking("FIRST-THOUGHT", "sig-1"), text("FIRST-TEXT")),
        message(thinking("second thought", "sig-2"), text("The real answer.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "answer")
        await app.run_shown.wait()
        await pilot.pause()
        assert [t.text for t in entries(app, "thinking")] == ["second thought"]
        assert [m.text for m in entries(app, "text")] == ["The real answer."]
        shown = screen_text(app)
        assert "FIRST" not in shown
        assert "retry 1" in shown


@pytest.mark.usefixtures("model_env")
async def test_the_status_line_counts_tokens_and_cost_over_the_same_runs(api: FakeAnthropic, tmp_path: Path) -> None:
    """After two runs the status line's tokens and cost are both the session's totals; one turn reads "1 turn"."""
    api.script(
        message(text("First."), input_tokens=1000, output_tokens=200),
        message(text("Second."), input_tokens=3000, output_tokens=400),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    costs: list[float] = []
    app.session.bus.subscribe(lambda e: costs.append(e.cost) if isinstance(e, UsageReported) else None)
    async with app.run_test(size=(160, 40)) as pilot:
        for task in ("one", "two"):
            await send(pilot, task)
            await until(pilot, lambda: app.run_shown.is_set() and not app.running, f"run {task!r} to end")
            app.run_shown.clear()
        await pilot.pause()
        status = app.query_one(StatusLine)
        assert len(costs) == 2
        assert (status.input_tokens, status.output_tokens) == (4000, 600)
        assert status.cost == pytest.approx(sum(costs))
        shown = screen_text(app)
        assert f"4.0k in / 600 out · ${sum(costs):.4f}" in shown
        assert shown.count("done in 1 turn ·") == 2
        assert "1 turns" not in shown


@pytest.mark.usefixtures("model_env")
async def test_a_failed_run_does_not_keep_partial_text_as_an_answer(api: FakeAnthropic, tmp_path: Path) -> None:
    """A stream error that is not retryable ends the run; its partial text leaves the screen."""
    api.script(stream_error(text("HALF-AN-ANSWER"), error_type="invalid_request_error", error_message="bad"))
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "answer")
        await app.run_shown.wait()
        await pilot.pause()
        assert not entries(app, "text")
        shown = screen_text(app)
        assert "HALF-AN-ANSWER" not in shown
        assert "✗ stopped:" in shown
        assert "stream_error" not in shown  # how it ended in words, never as an internal code


@pytest.mark.usefixtures("model_env")
async def test_resuming_shows_the_earlier_turns_and_continues(api: FakeAnthropic, tmp_path: Path) -> None:
    """`chimera --resume ID` opens with the session's earlier turns on screen; a new task continues it."""
    api.script(
        message(text("Looking."), tool_use("t1", "glob", {"pattern": "*.txt"}), stop_reason="tool_use"),
        message(text("One file: **notes.txt**.")),
        message(text("Still one file.")),
    )
    (tmp_path / "notes.txt").write_text("hi\n")
    first = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with first.run_test(size=(120, 40)) as pilot:
        await send(pilot, "count text files")
        await first.run_shown.wait()
    session_id = first.session.id
    app = build_app(RunOptions(resume=session_id, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await app.history_shown.wait()
        await pilot.pause()
        assert said(app) == ["count text files"]
        (call,) = entries(app, "tool")
        assert (call.name, call.output) == ("glob", "notes.txt\n")
        assert call.duration_ms is not None  # its real time, from the session's event log
        shown = screen_text(app)
        assert "One file: notes.txt." in shown
        assert f"Resumed session {session_id}" in shown
        await send(pilot, "and now?")
        await app.run_shown.wait()
        await pilot.pause()
        assert said(app) == ["count text files", "and now?"]
        assert [m["role"] for m in api.requests[-1].messages] == ["user", "assistant", "user", "assistant", "user"]


@pytest.mark.usefixtures("model_env")
async def test_words_sent_as_the_run_ends_stay_in_the_input_until_it_is_over(
    api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The run's end is on screen before its worker is done: enter in between keeps the words in the input
    (never steering a run that is over, never lost) and says to send them again; once over they are a task."""
    api.script(message(text("First done.")), message(text("Second done.")))
    release = asyncio.Event()
    real_run = Session.run

    async def run_held_at_its_end(self: Session, task: str, *, loop: str | None = None) -> AgentResult:
        result = await real_run(self, task, loop=loop)
        await release.wait()
        return result

    monkeypatch.setattr(Session, "run", run_held_at_its_end)
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(120, 40)) as pilot:
        await send(pilot, "first task")
        await until(pilot, lambda: app.state.status.state == "done", "the run's end on screen")
        await send(pilot, "second task")
        assert app.query_one(PromptInput).value == "second task"
        assert "The run is ending" in toasts(app)
        assert not app.run_shown.is_set()
        release.set()
        await app.run_shown.wait()
        await send(pilot, "")
        await until(pilot, lambda: said(app) == ["first task", "second task"], "the words sent as a task")
    assert len(api.requests) == 2
    assert "second task" not in json.dumps(api.requests[0].messages)


@pytest.mark.usefixtures("model_env")
async def test_the_inputs_cursor_holds_still_while_a_run_works(api: FakeAnthropic, tmp_path: Path) -> None:
    """Idle, the cursor in the input blinks; while a run works it holds still (each blink would be a screen
    update of its own among the run's), and blinks again once the run is over."""
    release, reached = threading.Event(), threading.Event()
    api.script(paused(message(text("Half of it, then the rest.", pieces=6)), release, reached))
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6"))
    async with app.run_test(size=(80, 24)) as pilot:
        prompt = app.query_one(PromptInput)
        assert prompt.cursor_blink
        await send(pilot, "talk")
        await asyncio.to_thread(reached.wait, 10)
        assert not prompt.cursor_blink
        release.set()
        await app.run_shown.wait()
        assert prompt.cursor_blink


@pytest.mark.usefixtures("model_env")
async def test_tab_queues_a_follow_up_that_runs_when_the_run_ends(api: FakeAnthropic, tmp_path: Path) -> None:
    fifo = tmp_path / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"),
        message(text("First done.")),
        message(text("Second done.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "first task")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await pilot.click("#prompt")
        await pilot.press(*"second task", "tab")
        assert app.query_one(PromptInput).value == ""
        assert app.session.follow_ups == ["second task"]
        await asyncio.to_thread(fifo.write_text, "done\n")  # the first run can end

        def answered() -> list[str]:
            return [m.text for m in entries(app, "text") if not m.streaming]

        await until(pilot, lambda: answered() == ["First done.", "Second done."], "the follow-up's answer on screen")
        assert said(app) == ["first task", "second task"]
        assert "second task" not in json.dumps(api.requests[1].messages)  # not steering: a run of its own
        assert app.session.store.tree.queued == {}


@pytest.mark.usefixtures("model_env")
async def test_an_interrupt_gives_queued_follow_ups_back_to_the_input(api: FakeAnthropic, tmp_path: Path) -> None:
    api.script(message(tool_use("t1", "bash", {"command": "sleep 300"}), stop_reason="tool_use"))
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "wait a while")
        await until(pilot, lambda: bool(entries(app, "tool")), "the command to start")
        await pilot.click("#prompt")
        await pilot.press(*"then do b", "tab")
        await pilot.press("escape")
        await app.run_shown.wait()
        await pilot.pause()
        prompt = app.query_one(PromptInput)
        assert prompt.value == "[queued: then do b]"
        assert prompt.whole(prompt.value) == "then do b"
        assert app.session.follow_ups == []
        assert app.session.store.tree.queued == {}  # given back, not left for a later resume
    assert len(api.requests) == 1


@pytest.mark.usefixtures("model_env")
async def test_the_timeline_folds_by_keyboard_in_the_workbench(api: FakeAnthropic, tmp_path: Path) -> None:
    """Tab from an empty input reaches the timeline: n jumps to the failed call, enter folds and unfolds it."""
    (tmp_path / "notes.txt").write_text("".join(f"note {n}\n" for n in range(40)))
    api.script(
        message(tool_use("r1", "read", {"path": "notes.txt"}), stop_reason="tool_use"),
        message(tool_use("g1", "grep", {"pattern": "[broken"}), stop_reason="tool_use"),
        message(text("Read it; the search pattern was broken.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    async with app.run_test(size=(80, 24)) as pilot:
        await send(pilot, "read the notes")
        await app.run_shown.wait()
        await pilot.pause()
        shown = screen_text(app)
        assert "note 3" not in shown  # the read folds to its line
        assert "▸ ✓ read  notes.txt" in shown
        await pilot.press("tab")  # the input is empty: focus moves to the timeline
        await pilot.press("n")
        read, grep = entries(app, "tool")
        assert app.transcript.entries.index(grep) == app.query_one("#conversation").cursor  # type: ignore[attr-defined]
        await pilot.press("enter")  # the failure was open: it folds
        assert grep.folded
        await pilot.press("up", "enter")  # the read opens on its whole output
        await pilot.pause()
        assert not read.folded
        assert "note 3" in screen_text(app)  # shown from its start


class Clock:
    """The transcript's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 500.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.usefixtures("model_env")
async def test_a_running_command_shows_its_latest_output_and_its_time_live(
    api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While a command runs, its line shows the seconds it has run (ticking) and its latest output; unfolded, its
    last lines; when it ends, its result, and nothing ticks any more."""
    monkeypatch.setattr(conversation, "TICK_SECONDS", 0.02)
    os.mkfifo(tmp_path / "gate")
    gate = os.open(tmp_path / "gate", os.O_RDWR | os.O_NONBLOCK)
    command = "printf 'compiling %s\\n' foo.c; echo linking; read -r _ < gate; echo b''uilt"
    api.script(message(tool_use("t1", "bash", {"command": command}), stop_reason="tool_use"), message(text("Built.")))
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    clock = Clock()
    app.transcript.clock = clock
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await send(pilot, "build it")
            await until(pilot, lambda: "running 0s · linking" in screen_text(app), "the latest line, live")
            assert "compiling foo.c" not in screen_text(app)  # folded: one line
            clock.now += 3.2
            await until(pilot, lambda: "running 3s · linking" in screen_text(app), "the time to tick")
            clock.now += 62
            await until(pilot, lambda: "running 1m 05s" in screen_text(app), "the time to tick in minutes")
            await pilot.press("tab", "up", "enter")  # the timeline, its last entry (the call), unfolded
            await until(pilot, lambda: "compiling foo.c" in screen_text(app), "the live lines, unfolded")
            (call,) = entries(app, "tool")
            assert call.status == "running"
            os.write(gate, b"go\n")
            await app.run_shown.wait()
            await until(pilot, lambda: "built" in screen_text(app), "the result")
            assert call.status == "done"
            assert "running" not in screen_text(app)
            assert not app.transcript.running
            await until(pilot, lambda: app.conversation._ticker is None, "the timer to stop")
    finally:
        os.close(gate)


@pytest.mark.usefixtures("model_env")
async def test_after_a_switch_the_conversation_is_the_branch_switched_to(api: FakeAnthropic, tmp_path: Path) -> None:
    """A switch (the session's, as a front end asks for it between runs) tells the conversation again as the
    branch it lands on, the later task gone from view, and says what it did."""
    (tmp_path / "a.txt").write_text("v1\n")
    api.script(
        message(text("Read it.")),
        message(tool_use("w1", "write", {"path": "a.txt", "content": "v2\n"}), stop_reason="tool_use"),
        message(text("Wrote v2.")),
    )
    app = build_app(RunOptions(workdir=tmp_path, model="claude-sonnet-4-6", permission_mode="bypass"))
    async with app.run_test(size=(100, 30)) as pilot:
        for task in ("look at a.txt", "write v2"):
            await send(pilot, task)
            await app.run_shown.wait()
            await until(pilot, lambda: not app.running, "the run to end")
            app.run_shown.clear()
        first_answer = next(n for n in app.session.store.tree.path() if summary(read_node(n)) == "Read it.")
        assert app.session.switch(first_answer.id) is not None
        await until(pilot, lambda: bool(entries(app, "switch")), "the switch told")
        await app.history_shown.wait()
        await pilot.pause()
        assert said(app) == ["look at a.txt"]
        assert [e.text for e in entries(app, "switch")] == [f"⇄ switched to {first_answer.id}: 1 file brought back"]
        assert "⇄ switched to" in screen_text(app)
        assert "write v2" not in screen_text(app)
        assert (tmp_path / "a.txt").read_text() == "v1\n"
