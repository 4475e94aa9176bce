"""`chimera run --max-tokens/--max-cost/--max-time` against a loopback Messages API: each limit stops the run."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from tests.cli_runner import assert_one_line_error, run_chimera, run_here
from tests.fake_anthropic import FakeAnthropic, Reply, message, text, tool_use
from tests.helpers_loop import PidFifo
from tests.processes import Reaper


def globbing(count: int, *, input_tokens: int = 120, output_tokens: int = 30) -> list[Reply]:
    """``count`` responses that each call glob (the model never stops), then a final answer."""
    calls = [
        message(
            tool_use(f"t{i}", "glob", {"pattern": "*"}),
            stop_reason="tool_use",
            input_tokens=input_tokens,
            output_tokens=output_tokens,
        )
        for i in range(count)
    ]
    return [*calls, message(text("Done."))]


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def test_max_tokens_stops_the_run_and_names_the_flag(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """--max-tokens 200 at 150 tokens a response: the second one ends the run (budget, exit 1); its call never runs."""
    api.script(*globbing(4))
    proc = run_here("run", "x", "--json", "--workdir", str(tmp_path), "--max-tokens", "200", env=model_env)
    assert proc.returncode == 1, proc.stderr
    events = events_of(proc.stdout)
    done = events[-1]
    assert (done["type"], done["success"], done["reason"], done["steps"]) == ("run_finished", False, "budget", 2)
    assert "used 300 tokens, over the budget of 200" in done["error"]
    finished = [(e["call_id"], e["status"]) for e in events if e["type"] == "tool_call_finished"]
    assert finished == [("t0", "ok"), ("t1", "skipped")]  # the call past the budget is not run, and says so
    assert len(api.requests) == 2
    assert "--max-tokens" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_max_cost_stops_the_run_and_names_the_flag(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path
) -> None:
    """--max-cost 0.5 at $0.315 a response (100k in, 1k out on Sonnet): the run stops after the second, at $0.63."""
    api.script(*globbing(4, input_tokens=100_000, output_tokens=1_000))
    proc = run_here("run", "x", "--json", "--workdir", str(tmp_path), "--max-cost", "0.5", env=model_env)
    assert proc.returncode == 1, proc.stderr
    done = events_of(proc.stdout)[-1]
    assert (done["success"], done["reason"], done["steps"], done["cost"]) == (False, "budget", 2, 0.63)
    assert "spent $0.6300, over the budget of $0.5" in done["error"]
    assert len(api.requests) == 2
    assert "--max-cost" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_max_time_stops_a_sleeping_command_and_kills_it(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, reaper: Reaper
) -> None:
    """--max-time 10 with `sleep 120` running: reason time_limit long before 120 s, exit 1, and no sleep is left."""
    fifo = PidFifo(tmp_path / "pid.fifo")
    api.script(
        message(tool_use("t1", "bash", {"command": fifo.command(120)}), stop_reason="tool_use"),
        message(text("never sent")),
    )
    workdir = tmp_path / "ws"
    workdir.mkdir()
    started = time.monotonic()
    try:
        proc = run_chimera(
            "run",
            "wait",
            "--json",
            "--workdir",
            str(workdir),
            "--permission-mode",
            "bypass",
            "--max-time",
            "10",  # room for the first request, which imports the SDK (about 2 s, more on a busy machine)
            env=model_env,
        )
        elapsed = time.monotonic() - started
    finally:
        fifo.close()
    assert proc.returncode == 1, proc.stderr
    events = events_of(proc.stdout)
    assert "tool_call_started" in [e["type"] for e in events], "the limit struck before the command started"
    pid = fifo.pid()
    done = events[-1]
    assert (done["type"], done["success"], done["reason"]) == ("run_finished", False, "time_limit")
    assert "wall-time limit of 10s" in done["error"]
    [result] = [e for e in events if e["type"] == "tool_call_finished"]
    assert (result["is_error"], result["output"].startswith("Cancelled")) == (True, True)
    assert elapsed < 60  # chimera's start-up included; the command alone would take 120 s
    assert "--max-time" in proc.stderr
    reaper.assert_killed(pid)


@pytest.mark.parametrize(
    ("flag", "value"), [("--max-cost", "abc"), ("--max-cost", "0"), ("--max-time", "-1"), ("--max-tokens", "0")]
)
def test_a_bad_limit_is_one_line_and_exit_2(isolated_env: Path, flag: str, value: str) -> None:
    """A limit that is not a number, or not above 0, gets one line naming the flag and the value."""
    assert_one_line_error(run_here("run", "x", flag, value), flag, value)
