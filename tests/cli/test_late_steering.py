"""Late words: what the person sends a run is read by that run or handed back, never dropped silently
and never slipped into another task.

Steering sent while the last answer streams (or as the run ends) gets one more turn of the same run;
words a run never read (it was interrupted, it stopped at a limit) come back as ``steering_returned``,
in the workbench back into the input; ``--control -`` without ``--json`` prints what a script must
answer. The real ``chimera run`` and the workbench, against the loopback Messages API.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import queue
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from chimera.core.events import (
    MessageCompleted,
    RunFinished,
    RunStarted,
    SteeringDelivered,
    SteeringReturned,
    StepEvent,
    UsageReported,
    event_from_json,
)
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.sessions.store import SessionStore
from chimera.tui.app import build_app
from chimera.tui.widgets.prompt_input import PromptInput
from tests.cli_runner import chimera_command
from tests.fake_anthropic import DEFAULT_MODEL, FakeAnthropic, message, paused, stalled, text, tool_use

DEADLINE = 30.0  # a guard against a hung run, never reached by a passing test
WORDS = "and update the docs too"


class Controlled:
    """``chimera run TASK --control - [--json]``: its output lines as they come, and lines sent to it."""

    def __init__(self, env: dict[str, str], project: Path, task: str, *flags: str, json_lines: bool = True) -> None:
        command = [*chimera_command(), "run", task, "--control", "-", "--workdir", str(project), *flags]
        if json_lines:
            command.append("--json")
        self.proc = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, **env},
        )
        self.json_lines = json_lines
        self.events: list[dict[str, Any]] = []
        self.out_lines: list[str] = []
        self.err_lines: list[str] = []
        self._lines: queue.Queue[tuple[str, str | None]] = queue.Queue()
        self._readers = [
            threading.Thread(target=self._read, args=(name,), daemon=True) for name in ("stdout", "stderr")
        ]
        for reader in self._readers:
            reader.start()

    def _read(self, name: str) -> None:
        stream = getattr(self.proc, name)
        for line in stream:
            self._lines.put((name, line))
        self._lines.put((name, None))

    def send(self, **line: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(line) + "\n")
        self.proc.stdin.flush()

    def _take(self, deadline: float) -> bool:
        """Take one output line; False when both outputs have ended."""
        try:
            name, line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError("nothing more came in time") from None
        if line is None:
            return not all(not reader.is_alive() for reader in self._readers) or not self._lines.empty()
        self._keep(name, line)
        return True

    def _keep(self, name: str, line: str) -> None:
        if name == "stderr":
            self.err_lines.append(line.rstrip("\n"))
        elif self.json_lines:
            self.events.append(json.loads(line))
        else:
            self.out_lines.append(line.rstrip("\n"))

    def until(self, kind: str, count: int = 1) -> dict[str, Any]:
        """Read until the ``count``-th event of ``kind`` has come; return it."""
        deadline = time.monotonic() + DEADLINE
        while len(self.of(kind)) < count:
            assert self._take(deadline), f"the output ended before a {kind} event"
        return self.of(kind)[count - 1]

    def until_said(self, pattern: str) -> re.Match[str]:
        """Read until a stderr line matches ``pattern``; its match."""
        deadline = time.monotonic() + DEADLINE
        while True:
            for line in self.err_lines:
                if (found := re.search(pattern, line)) is not None:
                    return found
            assert self._take(deadline), f"stderr ended without a line matching {pattern!r}"

    def finish(self) -> int:
        """Close the input, let the process end, read everything; its exit code."""
        assert self.proc.stdin is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=DEADLINE)
        for reader in self._readers:
            reader.join(DEADLINE)
        while not self._lines.empty():
            name, line = self._lines.get_nowait()
            if line is not None:
                self._keep(name, line)
        for stream in (self.proc.stdout, self.proc.stderr):
            assert stream is not None
            stream.close()
        return code

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def test_the_steering_returned_event_round_trips_through_json() -> None:
    """Words handed back are an event kind of their own, one JSON object a line."""
    event = SteeringReturned(run_id="r", session_id="s", seq=3, ts=1.5, text=WORDS)
    assert json.loads(event.to_json())["type"] == "steering_returned"
    assert event_from_json(event.to_json()) == event


def test_words_sent_while_the_last_answer_streams_are_read_by_the_same_run(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A steer while the final answer streams: one more turn of that run reads it; the follow-up queued
    beside it runs after, without the words."""
    release, reached = threading.Event(), threading.Event()
    api.script(
        paused(message(text("All done.")), release, reached),
        message(text("The docs are updated too.")),
        message(text("Hello.")),
    )
    run = Controlled(model_env, project, "fix it")
    first = run.until("run_started")
    assert reached.wait(DEADLINE)  # the last answer has begun, and stays open until released
    run.send(type="steer", text=WORDS)
    run.send(type="follow_up", text="then say hello")
    run.send(type="nonsense")  # lines are applied in order: its error says the two before are in
    run.until("error")
    release.set()
    run.until("run_finished", 2)
    assert run.finish() == 0

    (delivered,) = run.of("steering_delivered")
    assert (delivered["text"], delivered["run_id"]) == (WORDS, first["run_id"])  # in the run it was sent to
    assert run.of("steering_returned") == []
    finished = run.of("run_finished")
    assert [(f["success"], f["answer"]) for f in finished] == [(True, "The docs are updated too."), (True, "Hello.")]
    sent = [json.dumps(r.messages[-1]) for r in api.requests]
    assert WORDS in sent[1]  # the one more turn
    assert WORDS not in sent[2]  # the follow-up is a task of its own
    assert "then say hello" in sent[2]


@pytest.mark.parametrize("at", [MessageCompleted, UsageReported, RunFinished], ids=lambda c: c.type)
async def test_words_sent_as_the_run_ends_are_read_by_it_or_refused_never_kept_for_the_next_task(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, at: type[StepEvent]
) -> None:
    """Steering sent at the last answer's completion, its usage, or the run's end: delivered in that run
    (one more turn) or refused on the spot; the next task never carries it, and nothing stays queued."""
    api.script(message(text("All done.")), message(text("Docs too.")), message(text("Next done.")))
    session = start_session(RunOptions(workdir=project, model=DEFAULT_MODEL, permission_mode="bypass"))
    accepted: list[bool] = []
    seen: list[StepEvent] = []

    def hook(event: StepEvent) -> None:  # called inside the loop, on its event loop, as the event is published
        seen.append(event)
        if isinstance(event, at) and not accepted and len([e for e in seen if isinstance(e, RunStarted)]) == 1:
            accepted.append(session.steer(WORDS))

    core = session.agent.core_for(session.env, session_id=session.id)
    core.config = dataclasses.replace(core.config, handler=hook)
    try:
        first = await asyncio.wait_for(session.run("fix it"), DEADLINE)
        second = await asyncio.wait_for(session.run("next task"), DEADLINE)
    finally:
        await session.close()
    assert accepted != [], "the hook never fired"
    runs = [e.run_id for e in seen if isinstance(e, RunStarted)]
    delivered = [e for e in seen if isinstance(e, SteeringDelivered)]
    if accepted == [True]:
        assert [(e.text, e.run_id) for e in delivered] == [(WORDS, runs[0])]
        assert first.answer == "Docs too."
    else:
        assert delivered == []
        assert [e.text for e in seen if isinstance(e, SteeringReturned)] == []  # refused: nothing to give back
    assert second.success
    last = api.requests[-1].messages
    assert WORDS not in json.dumps(last[-1])  # the next task's own message holds none of it
    assert json.dumps(last).count(WORDS) == (1 if accepted == [True] else 0)
    assert session.store.tree.queued == {}


@pytest.mark.parametrize("json_lines", [True, False], ids=["json", "text"])
def test_a_steer_then_an_interrupt_hands_the_words_back_headless(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path, json_lines: bool
) -> None:
    """Steer, then interrupt before any turn read it: a steering_returned event (a line in text mode),
    exit 1, and nothing left queued for a resumed session."""
    api.script(stalled(text("Thinking about")))
    run = Controlled(model_env, project, "fix it", json_lines=json_lines)
    deadline = time.monotonic() + DEADLINE
    while not api.requests:  # the run is going once its request reached the server (the stream then stalls)
        assert time.monotonic() < deadline, "the run never asked the model"
        time.sleep(0.01)
    run.send(type="steer", text=WORDS)
    run.send(type="interrupt")
    if json_lines:
        returned = run.until("steering_returned")
        assert returned["text"] == WORDS
        assert run.finish() == 1
        kinds = [e["type"] for e in run.events]
        assert kinds.index("steering_returned") < kinds.index("run_finished")
        assert run.of("run_finished")[0]["reason"] == "interrupted"
        session_id = run.events[0]["session_id"]
    else:
        run.until_said(f"not delivered.*: {WORDS}$")
        assert run.finish() == 1
        (folder,) = (isolated_env / "sessions").iterdir()
        session_id = folder.name
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        assert store.tree.queued == {}


def test_without_json_the_control_channel_prints_what_a_script_must_answer(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Text mode: a question comes with its request_id on stderr, a refused line says why; answering
    that id works."""
    api.script(
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("Made it.")),
    )
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask", json_lines=False)
    asked = run.until_said(r"\? bash touch made-it: waiting for permission \(request_id (\S+?)\)")
    run.send(type="permission", request_id="nope:1", decision="allow")
    run.until_said(r"^chimera: control line refused: no permission request 'nope:1' is open")
    run.send(type="permission", request_id=asked.group(1), decision="allow")
    assert run.finish() == 0
    assert (project / "made-it").exists()


async def test_the_workbench_gives_unread_words_back_when_the_run_stops_at_its_limit(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Words sent during the last turn the limit allows come back to the input; the next task is sent
    without them."""
    fifo = project / "go.fifo"
    os.mkfifo(fifo)
    api.script(
        message(tool_use("t1", "bash", {"command": "cat go.fifo"}), stop_reason="tool_use"),
        message(text("Next done.")),
    )
    app = build_app(RunOptions(workdir=project, model=DEFAULT_MODEL, permission_mode="bypass", max_turns=1))
    returned: list[StepEvent] = []
    app.session.bus.subscribe(lambda e: returned.append(e) if isinstance(e, SteeringReturned) else None)
    async with app.run_test(size=(120, 40)) as pilot:
        prompt = app.query_one(PromptInput)
        await pilot.click("#prompt")
        await pilot.press(*"first task", "enter")
        for _ in range(2000):
            if app.transcript.running:
                break
            await pilot.pause(0.005)
        await pilot.press(*WORDS, "enter")
        assert prompt.value == ""  # taken as steering
        await asyncio.to_thread(fifo.write_text, "done\n")  # the command ends; the limit ends the run
        await app.run_shown.wait()
        for _ in range(2000):
            if not app.running:
                break
            await pilot.pause(0.005)
        assert prompt.value == f"[steering: {WORDS}]"  # back in the input, marked for what it was
        assert prompt.whole(prompt.value) == WORDS
        prompt.value = ""
        await pilot.press(*"next task", "enter")
        await app.run_shown.wait()
        await pilot.pause()
        await app.session.bus.drain()
    assert [e.text for e in returned] == [WORDS]  # type: ignore[attr-defined]
    assert WORDS not in json.dumps([r.messages for r in api.requests])
