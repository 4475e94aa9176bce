"""The transcript reducer (``chimera.tui.state``), fed event sequences recorded from real runs: no Textual.

Each sequence is what a session's ``events.jsonl`` holds after a run against the
loopback Messages API, read back as events: the same stream a live run, a resume
and a replay give the reducer.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from chimera.core.events import (
    MessageCompleted,
    PermissionDecided,
    PermissionRequested,
    PlanProposed,
    PlanStepChecked,
    Replanned,
    RunFinished,
    StepEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ToolOutputDelta,
    event_from_json,
)
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.reading import read_node, summary
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.bash import Bash
from chimera.core.tools.read import Read
from chimera.tui.state import LIVE_CHARS, LIVE_LINES, Entry, Transcript
from chimera.tui.transcript_render import summary_line
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, message, paused, stream_error, text, thinking, tool_use


@pytest.fixture
def alpha_project(project: Path) -> Path:
    """The project holding a.txt, which says alpha."""
    (project / "a.txt").write_text("alpha\n")
    return project


def isolated_home() -> Path:
    return Path(os.environ["CHIMERA_HOME"])


def recorded(session: Session) -> list[StepEvent]:
    """The session's event log, read back."""
    lines = (session.store.folder / "events.jsonl").read_text().splitlines()
    return [event_from_json(line) for line in lines]


async def run_and_record(project: Path, *tasks: str) -> list[StepEvent]:
    session = start_session(RunOptions(workdir=project, model=MODEL, permission_mode="bypass"))
    try:
        for task in tasks:
            await session.run(task)
    finally:
        await session.close()
    return recorded(session)


def shape(transcript: Transcript) -> list[tuple[str, str]]:
    """Each entry as (kind, what it says), tool calls by name and status."""
    return [(e.kind, f"{e.name}:{e.status}" if e.kind == "tool" else e.text) for e in transcript.entries]


@pytest.mark.usefixtures("model_env")
async def test_a_live_run_becomes_message_thinking_calls_and_the_answer(
    api: FakeAnthropic, alpha_project: Path
) -> None:
    api.script(
        message(
            thinking("Look first.", "sig-1"),
            text("Reading."),
            tool_use("r1", "read", {"path": "a.txt"}),
            stop_reason="tool_use",
        ),
        message(tool_use("g1", "grep", {"pattern": "[unclosed"}), stop_reason="tool_use"),
        message(text("It says **alpha**.")),
    )
    transcript = Transcript()
    transcript.apply_all(await run_and_record(alpha_project, "what does a.txt say?"))

    assert shape(transcript)[:-1] == [
        ("user", "what does a.txt say?"),
        ("thinking", "Look first."),
        ("text", "Reading."),
        ("tool", "read:done"),
        ("tool", "grep:failed"),
        ("text", "It says **alpha**."),
    ]
    done = transcript.entries[-1]
    assert (done.kind, done.severity) == ("notice", "success")
    assert done.text.startswith("✓ done in 3 turns")
    thought, said, read, grep = transcript.entries[1:5]
    assert thought.folded  # thinking folds by default
    assert not said.folded
    assert read.folded  # a call that went well folds to its line
    assert not grep.folded  # a failed one is open
    assert read.output.endswith("alpha\n")
    assert read.duration_ms is not None
    assert read.args == {"path": "a.txt"}
    assert not any(e.streaming for e in transcript.entries)


@pytest.mark.usefixtures("model_env")
async def test_a_retry_voids_the_attempt_it_replaces(api: FakeAnthropic, alpha_project: Path) -> None:
    api.script(
        stream_error(thinking("FIRST-THOUGHT", "sig-1"), text("FIRST-TEXT")),
        message(thinking("second thought", "sig-2"), text("The real answer.")),
    )
    transcript = Transcript()
    transcript.apply_all(await run_and_record(alpha_project, "answer"))
    said = " ".join(e.text for e in transcript.entries)
    assert "FIRST" not in said
    kinds = [kind for kind, _ in shape(transcript)]
    assert kinds == ["user", "notice", "thinking", "text", "notice"]
    assert transcript.entries[1].text.startswith("↻ ")
    assert transcript.entries[3].text == "The real answer."


@pytest.mark.usefixtures("model_env")
async def test_an_interrupt_cancels_the_running_call_and_keeps_no_partial_text(
    api: FakeAnthropic, alpha_project: Path
) -> None:
    fifo = alpha_project / "go.fifo"
    os.mkfifo(fifo)
    api.script(message(text("Waiting."), tool_use("b1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"))
    session = start_session(RunOptions(workdir=alpha_project, model=MODEL, permission_mode="bypass"))
    live = Transcript()
    started = threading.Event()
    session.bus.subscribe(live.apply)
    session.bus.subscribe(lambda e: started.set() if e.type == "tool_call_started" else None)
    try:
        run = asyncio.create_task(session.run("wait"))
        assert await asyncio.to_thread(started.wait, 10)
        session.interrupt()
        await asyncio.wait_for(run, 20)
        await session.bus.drain()
    finally:
        await session.close()
    from_log = Transcript()
    from_log.apply_all(recorded(session))
    for transcript in (live, from_log):  # the same from the bus as from the log
        assert shape(transcript) == [
            ("user", "wait"),
            ("text", "Waiting."),
            ("tool", "bash:cancelled"),
            ("notice", "⏹ interrupted"),
        ]


@pytest.mark.usefixtures("model_env")
async def test_steering_and_a_compaction_are_entries_of_their_own(
    api: FakeAnthropic, alpha_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CHIMERA_CONTEXT_WINDOW", "10000")
    (alpha_project / "a.txt").write_text("".join(f"line {n}\n" for n in range(300)))  # worth summarizing
    release, reached = threading.Event(), threading.Event()
    second = message(tool_use("r2", "read", {"path": "a.txt"}), stop_reason="tool_use", input_tokens=9_000)
    api.script(
        message(tool_use("r1", "read", {"path": "a.txt"}), stop_reason="tool_use"),
        paused(second, release, reached),
        message(text("SUMMARY: read a.")),
        message(text("Done, and noted.")),
    )
    session = start_session(RunOptions(workdir=alpha_project, model=MODEL, permission_mode="bypass"))
    try:
        run = asyncio.create_task(session.run("read a, then summarize"))
        assert await asyncio.to_thread(reached.wait, 10)
        session.steer("mind the encoding")
        release.set()
        await asyncio.wait_for(run, 20)
    finally:
        release.set()
        await session.close()
    transcript = Transcript()
    transcript.apply_all(recorded(session))
    kinds = [kind for kind, _ in shape(transcript)]
    assert kinds == ["user", "tool", "tool", "compaction", "steering", "text", "notice"]
    compaction = transcript.entries[3]
    assert compaction.folded
    assert compaction.text == "SUMMARY: read a."
    assert compaction.name.startswith("⇣ compacted the conversation (the context was filling up)")
    assert transcript.entries[4].text == "mind the encoding"


@pytest.mark.usefixtures("model_env")
async def test_folding_the_cursor_keys_act_on(api: FakeAnthropic, alpha_project: Path) -> None:
    api.script(
        message(tool_use("g1", "grep", {"pattern": "[x"}), stop_reason="tool_use"),
        message(tool_use("r1", "read", {"path": "a.txt"}), stop_reason="tool_use"),
        message(tool_use("g2", "grep", {"pattern": "(y"}), stop_reason="tool_use"),
        message(text("Done.")),
    )
    transcript = Transcript()
    transcript.apply_all(await run_and_record(alpha_project, "look"))
    failed = [i for i, e in enumerate(transcript.entries) if e.failed]
    assert len(failed) == 2
    assert transcript.next_failed(0) == failed[0]
    assert transcript.next_failed(failed[0]) == failed[1]
    assert transcript.next_failed(failed[1]) == failed[0]  # round again

    read = next(i for i, e in enumerate(transcript.entries) if e.name == "read")
    version = transcript.entries[read].version
    transcript.toggle(read)
    assert not transcript.entries[read].folded
    assert transcript.entries[read].version > version  # a view knows to draw it again
    transcript.toggle(0)  # the person's message does not fold
    assert not transcript.entries[0].folded

    transcript.fold_all(True)
    assert all(e.folded for e in transcript.entries if e.kind == "tool")
    transcript.fold_all(False)
    assert not any(e.folded for e in transcript.entries)


def test_the_transcript_needs_no_textual() -> None:
    """The reducer is plain data: importing it brings in neither Textual nor rich."""
    probe = "import sys, chimera.tui.state; print(sorted(m for m in ('textual', 'rich') if m in sys.modules))"
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert proc.stdout.strip() == "[]"


def kinds_and_words(transcript: Transcript) -> list[tuple[str, str, str, bool]]:
    return [(e.kind, e.text, f"{e.name}:{e.status}", e.folded) for e in transcript.entries]


@pytest.mark.usefixtures("model_env")
async def test_a_resumed_sessions_history_looks_as_the_live_run_did(api: FakeAnthropic, alpha_project: Path) -> None:
    api.script(
        message(
            thinking("Look first.", "sig-1"),
            text("Reading."),
            tool_use("r1", "read", {"path": "a.txt"}),
            stop_reason="tool_use",
        ),
        message(tool_use("g1", "grep", {"pattern": "[unclosed"}), stop_reason="tool_use"),
        message(text("It says **alpha**.")),
        message(text("Still alpha.")),
    )
    session = start_session(RunOptions(workdir=alpha_project, model=MODEL, permission_mode="bypass"))
    live = Transcript()
    session.bus.subscribe(live.apply)
    try:
        await session.run("what does a.txt say?")
        await session.run("and now?")
        await session.bus.drain()
    finally:
        await session.close()

    with SessionStore.open(isolated_home(), session.id, writable=False) as store:
        history = Transcript()
        history.apply_all(branch_events(store))
    assert kinds_and_words(history) == kinds_and_words(live)
    durations = [(e.name, e.duration_ms is not None) for e in history.entries if e.kind == "tool"]
    assert durations == [("read", True), ("grep", True)]  # real durations, from the log
    assert [e.text for e in history.entries if e.kind == "user"] == ["what does a.txt say?", "and now?"]


@pytest.mark.usefixtures("model_env")
async def test_a_history_without_its_log_still_tells_the_branch(api: FakeAnthropic, alpha_project: Path) -> None:
    api.script(message(tool_use("r1", "read", {"path": "a.txt"}), stop_reason="tool_use"), message(text("Alpha.")))
    session = start_session(RunOptions(workdir=alpha_project, model=MODEL, permission_mode="bypass"))
    try:
        await session.run("read it")
    finally:
        await session.close()
    (session.store.folder / "events.jsonl").write_text('{"type": "run_finished", "steps": "many"}\nnot json\n')
    with SessionStore.open(isolated_home(), session.id, writable=False) as store:
        history = Transcript()
        history.apply_all(branch_events(store))
    assert [(e.kind, e.name, e.status) for e in history.entries] == [
        ("user", "", ""),
        ("tool", "read", "done"),
        ("text", "", ""),
    ]
    assert history.entries[1].duration_ms is None  # not known: shown as unknown, not as 0.00s


# --- a running call's live output and time -------------------------------------------


class Clock:
    """The transcript's clock, moved by the test."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def started(call_id: str = "b1") -> ToolCallStarted:
    return ToolCallStarted(call_id=call_id, name="bash", args={"command": "make"})


def test_a_running_call_keeps_the_end_of_its_live_output_and_its_result_replaces_it() -> None:
    """Live output accumulates on the running call, bounded to its last lines; the result takes its place."""
    transcript = Transcript(clock=Clock())
    transcript.apply(started())
    (call,) = transcript.entries
    version = call.version
    transcript.apply(ToolOutputDelta(call_id="b1", text="step 1\nstep "))
    transcript.apply(ToolOutputDelta(call_id="b1", text="2\n"))
    assert (call.status, call.output) == ("running", "step 1\nstep 2\n")
    assert call.version > version
    transcript.apply(ToolOutputDelta(call_id="b1", text="".join(f"line {n}\n" for n in range(1000))))
    assert call.output.count("\n") <= LIVE_LINES
    assert call.output.endswith("line 999\n")
    transcript.apply(ToolOutputDelta(call_id="b1", text="x" * 100_000 + "\n"))
    assert len(call.output) <= LIVE_CHARS
    transcript.toggle(0)  # the person opens it to watch
    transcript.apply(ToolCallFinished(call_id="b1", name="bash", args={}, is_error=False, duration_ms=5, output="ok\n"))
    assert (call.status, call.output) == ("done", "ok\n")
    assert not call.folded  # and it stays open on its result
    transcript.apply(ToolOutputDelta(call_id="b1", text="late\n"))  # after its end: nothing changes
    assert call.output == "ok\n"


def test_live_output_that_skipped_a_part_says_so() -> None:
    """When more came at once than a delta carries, the gap is marked, not glued over."""
    transcript = Transcript(clock=Clock())
    transcript.apply(started())
    transcript.apply(ToolOutputDelta(call_id="b1", text="before"))
    transcript.apply(ToolOutputDelta(call_id="b1", text="after\n", skipped=20_000_000))
    assert transcript.entries[0].output == "before\n[… 20,000,000 characters not shown …]\nafter\n"


def test_a_running_calls_time_ticks_with_the_clock_and_only_running_calls_change() -> None:
    """tick() brings each running call's whole seconds up to the clock, touching only calls whose second changed."""
    clock = Clock()
    transcript = Transcript(clock=clock)
    transcript.apply(started("done"))
    transcript.apply(ToolCallFinished(call_id="done", name="bash", args={}, is_error=False, duration_ms=1, output=""))
    transcript.apply(started("b1"))
    finished, running = transcript.entries
    assert transcript.running
    versions = (finished.version, running.version)
    clock.now += 0.6
    assert not transcript.tick()  # still 0s: nothing to redraw
    assert (finished.version, running.version) == versions
    clock.now += 2.5
    assert transcript.tick()
    assert running.elapsed == 3
    assert finished.version == versions[0]
    assert running.version > versions[1]
    transcript.apply(PermissionDecided(call_id="b1", decision="allow"))  # waiting for the person is not run time
    assert running.elapsed == 0
    transcript.apply(RunFinished(success=False, reason="interrupted", steps=1, cost=0.0))
    assert not transcript.running
    assert not transcript.tick()


def test_a_call_waiting_for_the_persons_answer_says_so_and_counts_no_time() -> None:
    """Asked about, a call is not running: its line says it waits for the answer and shows no time (the clock
    does not tick it); allowed, it runs, its time counted from the answer."""
    clock = Clock()
    transcript = Transcript(clock=clock)
    transcript.apply(started("b1"))
    transcript.apply(PermissionRequested(request_id="r1", call_id="b1", name="bash", args={"command": "make"}))
    (call,) = transcript.entries
    assert call.status == "asking"
    assert summary_line(call) == "? bash  make · waiting for your answer"
    assert not transcript.running
    clock.now += 5
    assert not transcript.tick()
    transcript.apply(PermissionDecided(call_id="b1", decision="allow", request_id="r1"))
    assert (call.status, call.elapsed) == ("running", 0)
    clock.now += 2
    assert transcript.tick()
    assert summary_line(call) == "… bash  make · running 2s"


@pytest.mark.parametrize(
    ("status", "output", "said"),
    [
        ("refused", "Error: not permitted: bash is denied by the rule bash(rm *)", "refused, not run"),
        ("declined", "Error: the person declined to run this bash call; ask or try another way", "declined, not run"),
    ],
)
def test_a_call_the_permissions_kept_from_running_says_so_not_a_time(status: str, output: str, said: str) -> None:
    """A refused or declined call's line says it did not run, with no time and no count of lines as if it had."""
    transcript = Transcript()
    transcript.apply(started("b1"))
    transcript.apply(
        ToolCallFinished(
            call_id="b1", name="bash", args={"command": "make"}, is_error=True, duration_ms=0.2, output=output,
            status=status,
        )
    )  # fmt: skip
    (call,) = transcript.entries
    assert summary_line(call) == f"✗ bash  make · {said}"


def answered(transcript: Transcript, words: str) -> None:
    """The model's answer ``words``, streamed, then complete."""
    transcript.apply(TextDelta(text=words))
    message = {"role": "assistant", "content": [{"type": "text", "text": words}]}
    transcript.apply(MessageCompleted(message=message))  # type: ignore[arg-type]


@pytest.mark.parametrize("event", [PlanProposed, Replanned])
def test_an_answer_that_is_only_the_plans_list_shows_once_as_the_plan(event: type[PlanProposed]) -> None:
    """The planning answer is the checklist the plan entry shows (and ticks off): it is not shown twice.
    Words besides the list keep the answer on screen."""
    steps = ["Read `stats.py`", "Fix **median**"]
    transcript = Transcript(clock=Clock())
    answered(transcript, "- [ ] Read `stats.py`\n\n- [ ] Fix **median**\n")
    transcript.apply(event(steps=steps))
    assert [(e.kind, e.steps) for e in transcript.entries] == [("plan", steps)]
    answered(transcript, "I read the module first.\n\n- [ ] Read `stats.py`\n- [ ] Fix **median**")
    transcript.apply(event(steps=steps))
    assert [e.kind for e in transcript.entries] == ["plan", "text", "plan"]
    answered(transcript, "- [ ] Read `stats.py`")  # not the plan's list
    transcript.apply(event(steps=steps))
    assert [e.kind for e in transcript.entries][-2:] == ["text", "plan"]


def test_a_replan_shows_once_with_the_steps_done_still_ticked() -> None:
    """A re-plan's answer lists only the steps it revised: it gives way to the revised plan, which keeps the
    ticks of the steps done before it."""
    transcript = Transcript(clock=Clock())
    transcript.apply(PlanProposed(steps=["Read `notes.txt`", "Sum up `notes.txt`"]))
    transcript.apply(PlanStepChecked(index=0, passed=True, by="model", detail="DONE"))
    answered(transcript, "- [ ] Write `summary.txt`")
    transcript.apply(Replanned(steps=["Read `notes.txt`", "Write `summary.txt`"], why="notes.txt is missing"))
    plans = [(e.steps, e.checks) for e in transcript.entries]
    assert plans[1:] == [(["Read `notes.txt`", "Write `summary.txt`"], [True, None])]


def test_a_checks_done_is_the_ticked_step_and_a_failed_checks_words_stay() -> None:
    """The model's check answering DONE is what the step's tick says: it leaves. A failed check's answer says
    why, so it stays; so does a check by a command (its output is not an answer on screen)."""
    transcript = Transcript(clock=Clock())
    transcript.apply(PlanProposed(steps=["Fix it", "Test it"]))
    answered(transcript, "Fixed it.")
    answered(transcript, "NOT DONE: the test still fails")
    transcript.apply(PlanStepChecked(index=0, passed=False, by="model", detail="NOT DONE: the test still fails"))
    answered(transcript, "DONE")
    transcript.apply(PlanStepChecked(index=0, passed=True, by="model", detail="DONE"))
    answered(transcript, "Tested.")
    transcript.apply(PlanStepChecked(index=1, passed=True, by="make test", detail="Tested."))
    assert [e.text for e in transcript.entries if e.kind == "text"] == [
        "Fixed it.",
        "NOT DONE: the test still fails",
        "Tested.",
    ]
    assert transcript.entries[0].checks == [True, True]


@pytest.mark.usefixtures("model_env")
async def test_a_live_bash_call_shows_its_output_on_the_running_entry(api: FakeAnthropic, alpha_project: Path) -> None:
    """A real session and command: the bus's live output is on the running entry before the command ends;
    the log holds no delta and gives the same finished transcript."""
    os.mkfifo(alpha_project / "gate")
    gate = os.open(alpha_project / "gate", os.O_RDWR | os.O_NONBLOCK)
    command = "echo compiling; read -r _ < gate; echo linked"
    api.script(message(tool_use("b1", "bash", {"command": command}), stop_reason="tool_use"), message(text("Built.")))
    session = start_session(RunOptions(workdir=alpha_project, model=MODEL, permission_mode="bypass"))
    live = Transcript()
    seen = threading.Event()

    def watch(event: StepEvent) -> None:  # one subscriber: the transcript has the delta when it is seen
        live.apply(event)
        if isinstance(event, ToolOutputDelta):
            seen.set()

    session.bus.subscribe(watch)
    try:
        run = asyncio.create_task(session.run("build"))
        assert await asyncio.to_thread(seen.wait, 10)
        (call,) = [e for e in live.entries if e.kind == "tool"]
        assert (call.status, call.output) == ("running", "compiling\n")
        os.write(gate, b"go\n")
        await asyncio.wait_for(run, 20)
        await session.bus.drain()
    finally:
        os.close(gate)
        await session.close()
    assert (call.status, call.output) == ("done", "compiling\nlinked\n")
    log = recorded(session)
    assert not any(isinstance(e, ToolOutputDelta) for e in log)
    from_log = Transcript()
    from_log.apply_all(log)
    assert kinds_and_words(from_log) == kinds_and_words(live)
    assert [e.output for e in from_log.entries] == [e.output for e in live.entries]


@pytest.mark.usefixtures("model_env")
async def test_a_switch_and_the_branch_it_starts_are_entries_of_their_own(
    api: FakeAnthropic, alpha_project: Path
) -> None:
    """Switched back to the first answer, the transcript says so (files brought back), and the next task says
    it starts a new branch; told again after a clear, the conversation is the branch switched to."""
    write = {"path": "a.txt", "content": "v2\n"}
    api.script(
        message(text("Read it.")),
        message(tool_use("w1", "write", write), stop_reason="tool_use"),
        message(text("Wrote v2.")),
        message(text("Back at v1.")),
    )
    session = start_session(RunOptions(workdir=alpha_project, model=MODEL, permission_mode="bypass"))
    seen: list[StepEvent] = []
    session.bus.subscribe(seen.append)
    try:
        await session.run("look at a.txt")
        await session.run("write v2")
        first_answer = next(n for n in session.store.tree.path() if summary(read_node(n)) == "Read it.")
        assert session.switch(first_answer.id) is not None
        await session.run("where are we?")
        await session.bus.drain()
        transcript = Transcript()
        transcript.apply_all(seen)
        switches = [e.text for e in transcript.entries if e.kind == "switch"]
        assert switches == [
            f"⇄ switched to {first_answer.id}: 1 file brought back",
            "⑂ this task starts a new branch; the one it leaves is kept (chimera tree)",
        ]
        transcript.clear()
        transcript.apply_all(branch_events(session.store))
        assert [e.text for e in transcript.entries if e.kind == "user"] == ["look at a.txt", "where are we?"]
    finally:
        await session.close()


def finished_as(name: str, args: dict[str, object], result: ToolResult) -> Entry:
    """The transcript entry of a call of ``name`` that ended with ``result``, as the workbench shows it."""
    transcript = Transcript()
    transcript.apply(ToolCallStarted(call_id="c1", name=name, args=args))
    transcript.apply(
        ToolCallFinished(
            call_id="c1", name=name, args=args, is_error=result.is_error, duration_ms=10.0, output=result.output,
            data=result.data, status=result.ended,
        )
    )  # fmt: skip
    (call,) = transcript.entries
    return call


async def test_a_calls_line_counts_what_it_read_and_says_when_the_model_saw_it_cut(tmp_path: Path) -> None:
    """A read's line says the file's lines it read (not its paging note); one whose long line reached the model
    cut, and a command whose output was cut to head and tail, say `cut` (the command's count: all it printed)."""
    (tmp_path / "three.txt").write_text("a\nb\nc\n")
    (tmp_path / "long.txt").write_text("".join(f"{n}\n" for n in range(1, 4001)))
    (tmp_path / "wide.txt").write_text("x" * 3000 + "\nshort\n")
    (tmp_path / "empty.txt").write_text("")
    ctx = ToolContext(tmp_path, tmp_path / "spill", max_output=2000)
    lines = {}
    for path in ("three.txt", "long.txt", "wide.txt", "empty.txt"):
        result = await Read().run({"path": path}, ctx)
        shown = summary_line(finished_as("read", {"path": path}, result))
        lines[path] = shown.rsplit(" · ", 1)[1]
        numbered = [line for line in result.output.splitlines() if line.lstrip()[:1].isdigit()]
        assert lines[path].startswith(f"{len(numbered):,} line"), (path, shown)
    assert (lines["three.txt"], lines["wide.txt"], lines["empty.txt"]) == ("3 lines", "1 line, cut", "0 lines")
    printed = await Bash().run({"command": "seq 5000"}, ctx)
    assert summary_line(finished_as("bash", {"command": "seq 5000"}, printed)).endswith(" · 5,000 lines, cut")
    small = await Bash().run({"command": "seq 3"}, ctx)
    assert summary_line(finished_as("bash", {"command": "seq 3"}, small)).endswith(" · 3 lines")
