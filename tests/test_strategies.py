"""Each loop strategy end to end: the real `chimera run` against the loopback Messages API."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from chimera.core.env.local import LocalEnvironment
from chimera.core.loops.reflexion import REFLECTION_PROMPT, Reflexion
from chimera.core.providers.factory import create_provider
from chimera.core.tool_group import DEFAULT_TOOLS
from tests.anthropic_harness import serve_fake
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.test_cli import assert_one_line_error, run_chimera

MODEL = "claude-sonnet-4-6"


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeAnthropic]:
    with serve_fake(monkeypatch) as fake:
        yield fake


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text(f"{name} holds {name[0]}\n")
    return root


def model_env(api: FakeAnthropic) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_API_KEY": "k", "CHIMERA_MODEL": MODEL}


def events_of(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines()]


def reads(*names: str) -> Any:
    return message(*(tool_use(f"r{n}", "read", {"path": n}) for n in names), stop_reason="tool_use")


def texts_sent(request_messages: list[dict[str, Any]]) -> str:
    return json.dumps(request_messages)


# --- Reflexion ---------------------------------------------------------------------------


def test_reflexion_reflects_after_every_n_tool_calls(api: FakeAnthropic, project: Path) -> None:
    """With --reflect-every 2: two calls, a reflection; one call, none yet; one more, a reflection."""
    api.script(reads("a.txt", "b.txt"), reads("c.txt"), reads("a.txt"), message(text("All read.")))
    flags = ("--loop", "reflexion", "--reflect-every", "2", "--json", "--permission-mode", "bypass")
    proc = run_chimera("run", "read the files", "--workdir", str(project), *flags, env=model_env(api))

    assert proc.returncode == 0, proc.stderr
    events = events_of(proc.stdout)
    assert events[0]["loop"] == "reflexion"
    order = [e["type"] for e in events if e["type"] in {"turn_started", "reflection"}]
    assert order == ["turn_started", "reflection", "turn_started", "turn_started", "reflection", "turn_started"]
    sent = [texts_sent(r.messages) for r in api.requests]
    assert [s.count(REFLECTION_PROMPT) for s in sent] == [0, 1, 1, 2]
    last_user = api.requests[1].messages[-1]["content"]  # the tool results, then the reflection, one user turn
    assert [b["type"] for b in last_user] == ["tool_result", "tool_result", "text"]


def test_a_reflexion_session_replays_and_exports_without_the_reflection_as_a_prompt(
    api: FakeAnthropic, project: Path
) -> None:
    api.script(reads("a.txt"), message(text("Done.")))
    flags = ("--loop", "reflexion", "--reflect-every", "1", "--json", "--permission-mode", "bypass")
    proc = run_chimera("run", "read a", "--workdir", str(project), *flags, env=model_env(api))
    assert proc.returncode == 0, proc.stderr
    session_id = events_of(proc.stdout)[0]["session_id"]

    replayed = run_chimera("replay", session_id, "--json")
    assert replayed.returncode == 0, replayed.stderr
    replay_events = events_of(replayed.stdout)
    assert [e["type"] for e in replay_events].count("run_started") == 1  # the reflection is not a task of its own
    assert replay_events[-1]["success"] is True
    exported = run_chimera("export", session_id)
    assert exported.stdout.count("## You") == 1
    assert REFLECTION_PROMPT not in exported.stdout


def test_reflect_every_must_be_positive(isolated_env: Path) -> None:
    assert_one_line_error(run_chimera("run", "x", "--loop", "reflexion", "--reflect-every", "0"), "reflect-every")


def test_reflexion_from_python(api: FakeAnthropic, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_BASE_URL", api.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    api.script(reads("a.txt", "b.txt", "c.txt"), message(text("Read three.")))
    with LocalEnvironment(workdir=project) as env:
        result = Reflexion(max_steps=50, reflect_every=3).run(create_provider(MODEL), DEFAULT_TOOLS, "read", env)
    assert (result.success, result.steps, result.answer) == (True, 2, "Read three.")
    assert texts_sent(api.requests[1].messages).count(REFLECTION_PROMPT) == 1
    with pytest.raises(ValueError, match="at least 1"):
        Reflexion(reflect_every=0)
