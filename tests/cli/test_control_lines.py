"""`chimera run --control -` answers every line it cannot apply with one `error` event and reads on: a line nested
thousands deep, a lone surrogate in a steer's or follow-up's words."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, stalled

DEEP = "[" * 5000 + "]" * 5000
BAD_LINES = [
    DEEP,  # deeper than any JSON reader should follow
    '{"type": "steer", "text": ' + DEEP + "}",
    '{"type": "plan", "decision": ' + DEEP + "}",
    '{"type": "steer", "text": "fix it\\ud800"}',  # a lone surrogate: no UTF-8 text holds one
    '{"type": "follow_up", "text": "\\udfff then test"}',
    '{"type": "permission", "request_id": "r\\ud800", "decision": "allow"}',
]


def test_deep_and_unencodable_lines_get_one_error_each_and_the_interrupt_after_them_works(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """While the model streams, six bad lines then an interrupt: six error events naming the fault, no
    traceback, no codec error, and the run ends interrupted."""
    api.script(stalled())
    proc = subprocess.Popen(
        [*chimera_command(), "run", "wait", "--json", "--control", "-", "--workdir", str(project)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, **model_env},
    )  # fmt: skip
    assert proc.stdin is not None
    assert proc.stdout is not None
    events: list[dict[str, Any]] = []
    try:
        for line in proc.stdout:  # the run is talking to the model: now the lines
            events.append(json.loads(line))
            if events[-1]["type"] == "turn_started":
                break
        proc.stdin.write("".join(f"{line}\n" for line in BAD_LINES) + '{"type": "interrupt"}\n')
        proc.stdin.close()
        events += [json.loads(line) for line in proc.stdout]
        code = proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()
    assert proc.stderr is not None
    stderr = proc.stderr.read()
    proc.stderr.close()
    proc.stdout.close()
    assert "Traceback" not in stderr
    errors = [e for e in events if e["type"] == "error"]
    assert len(errors) == len(BAD_LINES), errors
    assert all("codec" not in e["message"] for e in errors)
    assert "nested" in errors[0]["message"]
    assert "surrogate" in errors[3]["message"]
    assert events[-1]["type"] == "run_finished"
    assert events[-1]["reason"] == "interrupted"
    assert code == 1
