"""Stopping a headless run in tests: `chimera run --json` whose model makes one call, its events up to the
call's start, Ctrl-C sent, and the check that it stopped promptly and said so."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

from tests.cli_runner import chimera_command
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use

__all__ = ["PROMPT", "assert_interrupted", "interrupt", "start", "until_the_call_starts"]

PROMPT = 2.5  # seconds from Ctrl-C (or the time limit) to Chimera's exit; the brief is "about 2"


def start(
    api: FakeAnthropic, model_env: dict[str, str], ws: Path, name: str, args: dict[str, Any], *flags: str, **env: str
) -> subprocess.Popen[str]:
    """`chimera run --json` in ``ws`` against ``api`` (``model_env``, then ``env``): one call of ``name``."""
    api.script(message(tool_use("t1", name, args), stop_reason="tool_use"), message(text("never sent")))
    return subprocess.Popen(
        [*chimera_command(), "run", "go", "--json", "--workdir", str(ws), "--permission-mode", "bypass", *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**os.environ, **model_env, **env},
    )


def until_the_call_starts(proc: subprocess.Popen[str]) -> list[dict[str, Any]]:
    """The events up to tool_call_started (the call runs from then on)."""
    assert proc.stdout is not None
    events = []
    for line in proc.stdout:
        events.append(json.loads(line))
        if events[-1]["type"] == "tool_call_started":
            return events
    raise AssertionError(f"the call never started: {proc.stderr.read() if proc.stderr else ''}")


def interrupt(proc: subprocess.Popen[str]) -> tuple[float, list[dict[str, Any]], str]:
    """SIGINT now; (seconds until Chimera exited, the events after it, stderr)."""
    sent = time.monotonic()
    proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    return time.monotonic() - sent, [json.loads(line) for line in out.splitlines()], err


def assert_interrupted(elapsed: float, events: list[dict[str, Any]], err: str, code: int | None) -> None:
    """Exit 1 within PROMPT seconds, the run finished as interrupted, its call cancelled, no traceback."""
    assert code == 1, err
    assert elapsed < PROMPT, f"Chimera took {elapsed:.1f}s to stop after Ctrl-C"
    done = events[-1]
    assert (done["type"], done["reason"]) == ("run_finished", "interrupted"), err
    [result] = [e for e in events if e["type"] == "tool_call_finished"]
    assert result["output"].startswith("Cancelled")
    assert "Traceback" not in err
