"""`chimera run --control -`: a script steers, answers and queues work over stdin while the run goes.

Each test runs the real command against the loopback Messages API, reads its JSON
events as they come and writes control lines in answer to them (a resume after a crash runs the command's
``main`` in the test's process).
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from tests.cli_runner import chimera_command, run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

DEADLINE = 30.0  # a guard against a hung run, never reached by a passing test


class Controlled:
    """A `chimera run --control -` process: its events as they arrive, and lines sent to it."""

    def __init__(self, model_env: dict[str, str], workdir: Path, task: str, *flags: str) -> None:
        env = {**os.environ, **model_env}
        command = [*chimera_command(), "run", task, "--json", "--control", "-", "--workdir", str(workdir), *flags]
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
        )
        self.events: list[dict[str, Any]] = []
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(None)

    def send(self, **line: Any) -> None:
        self.send_raw(json.dumps(line))

    def send_raw(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line + "\n")
        self.proc.stdin.flush()

    def close_input(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()

    def until(self, kind: str, count: int = 1) -> dict[str, Any]:
        """Read events until the ``count``-th of ``kind`` has arrived; return it."""
        deadline = time.monotonic() + DEADLINE
        while len(self.of(kind)) < count:
            try:
                line = self._lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise AssertionError(f"no {kind} event in time") from None
            assert line is not None, f"the run ended before a {kind} event"
            self.events.append(json.loads(line))
        return self.of(kind)[count - 1]

    def finish(self) -> tuple[int, str]:
        """Let the process end (its input closed); every event read; its exit code and stderr."""
        assert self.proc.stdin is not None
        assert self.proc.stderr is not None
        if not self.proc.stdin.closed:
            self.proc.stdin.close()
        code = self.proc.wait(timeout=DEADLINE)
        self._reader.join(DEADLINE)
        while (line := self._lines.get_nowait() if not self._lines.empty() else None) is not None:
            self.events.append(json.loads(line))
        err = self.proc.stderr.read()
        self.proc.stderr.close()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        return code, err

    def of(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


def touch_then_done() -> list[Any]:
    return [
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("Done.")),
    ]


def test_a_permission_is_answered_over_the_channel(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    api.script(*touch_then_done())
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask")
    asked = run.until("permission_requested")
    run.send(type="permission", request_id=asked["request_id"], decision="allow")
    code, err = run.finish()
    assert code == 0, err
    assert (project / "made-it").exists()
    assert run.of("permission_decided")[0]["decision"] == "allow"


def test_malformed_lines_get_an_error_event_and_the_run_goes_on(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    api.script(*touch_then_done())
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask")
    asked = run.until("permission_requested")
    bad = [
        "not json",
        "[1]",
        '{"type": "nope"}',
        '{"type": "permission", "decision": "allow"}',
        '{"type": "permission", "request_id": "t9:zz", "decision": "allow"}',
        '{"type": "steer"}',
        json.dumps({"type": "permission", "request_id": asked["request_id"], "decision": "sure"}),
    ]
    for line in bad:
        run.send_raw(line)
    run.until("error", 7)
    run.send(type="permission", request_id=asked["request_id"], decision="deny")
    code, err = run.finish()
    assert code == 0, err
    messages = [e["message"] for e in run.of("error")]
    assert messages == [
        "the line is not JSON: send one JSON object a line",
        "the line is not a JSON object",
        "unknown type 'nope': use one of steer, follow_up, interrupt, plan, permission",
        'a permission answer needs the "request_id" of its permission_requested event',
        "no permission request 't9:zz' is open",
        'a steer needs its words in "text"',
        "\"decision\" must be one of allow, always, deny, not 'sure'",
    ]
    assert not (project / "made-it").exists()


def test_steering_and_a_follow_up_over_the_channel(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """A steer reaches the model once, at the next step; a follow-up starts the next run when this one ends."""
    api.script(*touch_then_done(), message(text("Second task done.")))
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask")
    asked = run.until("permission_requested")
    run.send(type="steer", text="name it made-it, please")
    run.send(type="follow_up", text="now say hello")
    run.send(type="permission", request_id=asked["request_id"], decision="allow")
    run.until("run_finished", 2)
    code, err = run.finish()
    assert code == 0, err
    assert [e["task"] for e in run.of("run_started")] == ["make the file", "now say hello"]
    assert [e["text"] for e in run.of("steering_delivered")] == ["name it made-it, please"]
    sent = [json.dumps(r.messages) for r in api.requests]
    assert sent[1].count("name it made-it, please") == 1
    assert "now say hello" in sent[2]


def test_interrupt_over_the_channel(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    api.script(*touch_then_done())
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask")
    run.until("permission_requested")
    run.send(type="interrupt")
    code, _ = run.finish()
    assert code == 1
    assert run.of("run_finished")[0]["reason"] == "interrupted"
    assert not (project / "made-it").exists()


def test_a_plan_is_approved_over_the_channel(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> None:
    api.script(
        message(text("- [ ] Create `made-it`")),
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("Created.")),
        message(text("DONE")),
    )
    run = Controlled(model_env, project, "make the file", "--loop", "plan", "--permission-mode", "bypass")
    proposed = run.until("plan_proposed")
    assert proposed["steps"] == ["Create `made-it`"]
    run.send(type="plan", decision="approve")
    code, err = run.finish()
    assert code == 0, err
    assert (project / "made-it").exists()


def test_closing_the_channel_answers_what_is_open_as_a_headless_run_would(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    api.script(*touch_then_done())
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask")
    run.until("permission_requested")
    run.close_input()
    code, err = run.finish()
    assert code == 0, err
    assert run.of("permission_decided")[0]["decision"] == "deny"
    assert not (project / "made-it").exists()


def test_a_line_that_is_not_utf8_is_one_error_and_the_channel_stays_open(isolated_env: Path) -> None:
    """In a UTF-8 locale a stray byte used to end the channel silently; it is a bad line like any other."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}  # the demo: no model needed
    env.update(LC_ALL="C.UTF-8", LANG="C.UTF-8")
    proc = subprocess.run(
        [*chimera_command(), "run", "x", "--control", "-", "--json"],
        input=b'\xff\xfe junk\n{"type": "nope"}\n',
        capture_output=True,
        env=env,
        timeout=DEADLINE,
    )
    assert proc.returncode == 0, proc.stderr
    errors = [e for e in map(json.loads, proc.stdout.decode().splitlines()) if e["type"] == "error"]
    assert [e["message"] for e in errors] == [
        "the line is not JSON: send one JSON object a line",
        "unknown type 'nope': use one of steer, follow_up, interrupt, plan, permission",
    ]


def test_a_crash_keeps_the_queued_steer_and_follow_up_for_the_resumed_session(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """SIGKILL while a steer and a follow-up wait: the resumed session delivers the steer to its next
    run and runs the follow-up after it, each once."""
    api.script(*touch_then_done())
    run = Controlled(model_env, project, "make the file", "--permission-mode", "ask")
    started = run.until("run_started")
    run.until("permission_requested")
    run.send(type="steer", text="name it made-it, please")
    run.send(type="follow_up", text="now say hello")
    run.send(type="nonsense")  # lines are applied in order: its error says the two before are in
    run.until("error")
    run.proc.send_signal(signal.SIGKILL)
    run.proc.wait(timeout=DEADLINE)
    run.finish()

    api.requests.clear()
    api.script(message(text("Picked up.")), message(text("Hello.")))
    proc = run_here("run", "go on", "--resume", started["session_id"], "--json", env=model_env)
    assert proc.returncode == 0, proc.stderr
    assert "2 queued messages from when Chimera last stopped" in proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [e["task"] for e in events if e["type"] == "run_started"] == ["go on", "now say hello"]
    assert [e["text"] for e in events if e["type"] == "steering_delivered"] == ["name it made-it, please"]
    first, second = (json.dumps(r.messages) for r in api.requests)
    assert first.count("name it made-it, please") == 1
    assert "now say hello" not in first
    assert second.count("now say hello") == 1

    api.script(message(text("Nothing pending.")))
    again = run_here("run", "and now?", "--resume", started["session_id"], "--json", env=model_env)
    assert again.returncode == 0, again.stderr
    assert "queued" not in again.stderr  # taken once, never again
    assert "name it made-it" not in json.dumps(api.requests[-1].messages[-1])
