"""Each call's saved full output has a file of its own, though a local server numbers tool ids from 1 at each start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chimera.core.events import ToolCallFinished
from chimera.core.sessions.history import branch_events
from chimera.core.sessions.store import SessionStore
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def _count(start: int, end: int) -> str:
    return "".join(f"{n}\n" for n in range(start, end + 1))


def _run(api: FakeAnthropic, env: dict[str, str], project: Path, command: str, *resume: str) -> list[dict[str, Any]]:
    """One headless run whose model calls bash as ``toolu_1`` (the id a local server gives its first call)."""
    api.script(
        message(tool_use("toolu_1", "bash", {"command": command}), stop_reason="tool_use"),
        message(text("Counted.")),
    )
    proc = run_here(
        "run", "count", "--json", "--workdir", str(project), "--permission-mode", "bypass", *resume,
        env={**env, "CHIMERA_MAX_TOOL_OUTPUT": "200"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return [json.loads(line) for line in proc.stdout.splitlines()]


def test_two_runs_with_the_same_tool_id_keep_both_saved_outputs(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """Two runs of one session whose server numbers ids from 1: both outputs survive, each result names its own
    file, and a resumed session (what `o` opens) and a replay point each call at its own."""
    first = _run(api, model_env, project, "seq 1 500")
    session_id = first[0]["session_id"]
    second = _run(api, model_env, project, "seq 1000 1500", "--resume", session_id)
    done = [next(e for e in events if e["type"] == "tool_call_finished") for events in (first, second)]
    saved = [Path(e["data"]["full_output"]) for e in done]
    assert saved[0] != saved[1]
    assert saved[0].read_text() == _count(1, 500)
    assert saved[1].read_text() == _count(1000, 1500)
    for event, path in zip(done, saved, strict=True):
        assert f"full output: {path} ...]" in event["output"]  # what the model was told names its own file
    with SessionStore.open(isolated_env, session_id, writable=False) as store:
        resumed = [e for e in branch_events(store) if isinstance(e, ToolCallFinished)]
    assert [e.data["full_output"] for e in resumed] == [str(p) for p in saved]
    replay = run_here("replay", session_id, "--json")
    assert replay.returncode == 0, replay.stderr
    replayed = [json.loads(line) for line in replay.stdout.splitlines()]
    played = [e["data"].get("full_output") for e in replayed if e["type"] == "tool_call_finished"]
    assert played == [str(p) for p in saved]
