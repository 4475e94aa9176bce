"""A tool call whose input nests arrays or objects hundreds of levels deep gets a tool error saying so; the run,
its events, its session and the secrets masking all go on as usual."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from chimera.core.bus import EventBus
from chimera.core.env.local import LocalEnvironment
from chimera.core.events import StepEvent, ToolCallFinished
from chimera.core.redact import Redactor
from chimera.core.sessions.store import SessionStore
from chimera.core.strict_json import MAX_DEPTH
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.helpers_loop import SnapshotReplay, call, collect, finished, make_core, only, say, turn

SECRET = "sk-ant-test-0123456789-do-not-leak"  # long enough to be masked wherever it shows
TOO_DEEP = f"Error: the arguments are nested more than {MAX_DEPTH} levels deep: send a flatter JSON object"


def arrays(depth: int) -> str:
    return "[" * depth + "]" * depth


def objects(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


def test_deeply_nested_tool_input_is_a_tool_error_and_the_run_goes_on(
    api: FakeAnthropic, model_env: dict[str, str], tmp_path: Path, isolated_env: Path
) -> None:
    """600 levels of arrays or objects, in a value or under a key, for a known or an unknown tool: one error each."""
    calls = {
        "t1": ("glob", '{"pattern": ' + arrays(600) + "}"),
        "t2": ("bash", '{"command": "true", "x": ' + objects(600) + "}"),
        "t3": ("nope", '{"x": ' + objects(600) + "}"),
        "t4": ("grep", '{"pattern": ' + arrays(MAX_DEPTH + 1) + "}"),
        "t5": ("glob", '{"pattern": "*", "x": ' + arrays(MAX_DEPTH - 1) + "}"),  # deep, but allowed
        "t6": ("glob", '{"pattern": ' + arrays(5000) + "}"),  # past the JSON parser's own depth
    }
    blocks = [tool_use(call_id, name, raw_json=raw) for call_id, (name, raw) in calls.items()]
    api.script(message(*blocks, stop_reason="tool_use"), message(text(f"Done, {SECRET}.")))
    ws = tmp_path / "ws"
    ws.mkdir()
    proc = run_here(
        "run",
        "x",
        "--json",
        "--workdir",
        str(ws),
        "--permission-mode",
        "bypass",
        env={**model_env, "ANTHROPIC_API_KEY": SECRET},
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    outputs = {e["call_id"]: (e["is_error"], e["output"]) for e in events if e["type"] == "tool_call_finished"}
    assert outputs["t1"] == outputs["t2"] == outputs["t4"] == outputs["t6"] == (True, TOO_DEEP)
    assert outputs["t3"][0] is True
    assert outputs["t3"][1].startswith("Error: there is no tool named 'nope'")
    assert outputs["t5"][0] is True
    assert "unknown argument 'x'" in outputs["t5"][1]  # a depth within the bound reaches the schema check
    done = events[-1]
    assert (done["type"], done["success"], done["answer"]) == ("run_finished", True, "Done, [secret removed].")
    sent = api.requests[-1].messages
    assert [b["tool_use_id"] for b in sent[-1]["content"]] == list(calls)
    inputs = [b["input"] for b in sent[-2]["content"] if b["type"] == "tool_use"]
    assert [inputs[i] for i in (0, 1, 3, 5)] == [{}, {}, {}, {}]
    assert "Traceback" not in proc.stderr
    for path in isolated_env.rglob("*.jsonl"):
        assert SECRET not in path.read_text()


class SecretReplay(SnapshotReplay):
    """A replay with a credential to mask, so every event and message goes through the masking walk."""

    secrets = ("a-secret-value",)


async def test_a_provider_handing_over_deep_input_directly_is_answered_alike(tmp_path: Path) -> None:
    """A provider that builds the message itself (a replay): the bus, the session and secrets masking cope."""
    ws = tmp_path / "ws"
    ws.mkdir()
    deep: Any = []
    for _ in range(2000):
        deep = [deep]
    calls = turn(call("t1", "glob", pattern=deep), call("t2", "glob", pattern="*"))
    provider = SecretReplay([calls, turn(say("Done."))])
    bus = EventBus()
    lines: list[str] = []

    def keep(event: StepEvent) -> None:
        lines.append(event.to_json())

    bus.subscribe(keep, name="json")
    with LocalEnvironment(ws) as env, SessionStore.create(tmp_path / "home", "s1", workdir=ws, model="m") as store:
        core = make_core(provider, env, bus=bus)
        core.recorder = store
        events = await collect(core, "go")
        await bus.close()
    assert finished(events).success
    results = {e.call_id: e.output for e in only(events, ToolCallFinished)}
    assert results == {"t1": TOO_DEEP, "t2": "No files match '*'."}
    assert len(lines) == len(events)
    assert json.dumps(provider.sent[-1].messages)  # what goes back to the model serialises


def test_secrets_are_masked_at_any_depth_without_overflowing() -> None:
    """The masking walk is iterative: a secret 5,000 levels down is masked; untouched parts stay the same objects."""
    kept = {"plain": ["text"]}
    deep: Any = ["key a-secret-value here"]
    for _ in range(5000):
        deep = [deep, kept]
    masked = Redactor(["a-secret-value"]).mask_value({"deep": deep, "kept": kept})
    inner = masked["deep"]
    for _ in range(5000):
        assert inner[1] is kept
        inner = inner[0]
    assert inner == ["key [secret removed] here"]
    assert masked["kept"] is kept
