"""`chimera acp` under ACP clients of other implementations, a check across implementations: acpx (npm, the headless
CLI client) runs a turn with `--approve-all` and with `--deny-all`, its JSON transcript read; the TypeScript SDK's
`ClientSideConnection` completes a turn and answers a permission question; Toad, where it can be installed. Each
client starts its own `chimera acp`, against the test's model on the loopback server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.acp_client_helpers import Transcript, acpx_command, one_turn_command, run_client, toad_command
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use


def touch_once() -> list[Any]:
    """The model says what it will do and makes a file with a command (which asks first), then says it is done."""
    return [
        message(text("Making it."), tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"),
        message(text("Done.")),
    ]


def result_told(api: FakeAnthropic) -> str:
    """The tool result the model read in the second request."""
    blocks = api.requests[1].messages[-1]["content"]
    return str(next(b for b in blocks if b["type"] == "tool_result")["content"])


@pytest.mark.parametrize(
    ("mode", "chosen", "ended", "exit_code"),
    [("--approve-all", "allow_once", "completed", 0), ("--deny-all", "reject_once", "failed", 5)],
    ids=["approve-all", "deny-all"],
)
def test_acpx_runs_a_turn_whose_command_asks_first(
    api: FakeAnthropic,
    model_env: dict[str, str],
    project: Path,
    tmp_path: Path,
    mode: str,
    chosen: str,
    ended: str,
    exit_code: int,
) -> None:
    """acpx's JSON transcript holds the command's tool_call, Chimera's question about it and acpx's answer (allow
    once under --approve-all, deny under --deny-all, which acpx's exit code 5 reports), the call's end, the words
    and end_turn; the file is made only when allowed, and a denied model reads that it was declined."""
    api.script(*touch_once())
    done = run_client(acpx_command(project, mode, prompt="make the file"), {**model_env, "HOME": str(tmp_path)})

    assert done.returncode == exit_code, done.stderr
    said = Transcript.of(done.stdout)
    [call] = said.updates("tool_call")
    assert (call["kind"], call["title"], call["status"]) == ("execute", "touch made-it", "pending")
    asked, answered = said.exchange("session/request_permission")
    assert asked["params"]["toolCall"]["toolCallId"] == call["toolCallId"]
    kinds = {option["optionId"]: option["kind"] for option in asked["params"]["options"]}
    assert kinds[answered["result"]["outcome"]["optionId"]] == chosen
    ends = [u["status"] for u in said.updates("tool_call_update") if u["status"] in ("completed", "failed")]
    assert ends == [ended]
    assert said.exchange("session/prompt")[1]["result"] == {"stopReason": "end_turn"}
    assert said.says() == "Making it.Done."
    assert (project / "made-it").exists() == (ended == "completed")
    assert ("declined" in result_told(api)) == (ended == "failed")


def test_the_typescript_sdks_client_completes_a_turn(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """Through the TypeScript SDK's ClientSideConnection: initialize names Chimera, session/new opens in ask, the
    command's question is answered allow once, the call runs and completes, the words stream, the turn ends
    end_turn, and the agent exits 0 when the client closes its input."""
    api.script(*touch_once())
    done = run_client(one_turn_command(project, "allow_once", "make the file"), model_env)

    assert done.returncode == 0, done.stdout + done.stderr
    seen = json.loads(done.stdout)
    assert seen["initialize"]["agentInfo"]["name"] == "chimera"
    assert seen["session"]["modes"]["currentModeId"] == "ask"
    [question] = seen["questions"]
    assert question["toolCall"]["title"] == "touch made-it"
    assert [o["kind"] for o in question["options"]] == ["allow_once", "allow_always", "reject_once"]
    told = [(u["sessionUpdate"], u.get("status")) for u in seen["updates"] if u["sessionUpdate"].startswith("tool")]
    assert told == [("tool_call", "pending"), ("tool_call_update", "in_progress"), ("tool_call_update", "completed")]
    words = [u["content"]["text"] for u in seen["updates"] if u["sessionUpdate"] == "agent_message_chunk"]
    assert "".join(words) == "Making it.Done."
    assert seen["prompt"] == {"stopReason": "end_turn"}
    assert seen["exitCode"] == 0
    assert (project / "made-it").exists()


def test_toad_runs_chimera_acp() -> None:
    """Toad (`toad acp "chimera acp"`) under tmux, where Toad can be installed: skipped elsewhere, naming why."""
    toad = toad_command()
    pytest.skip(f"{toad} is here, but no machine of this project could install Toad to write its tmux test against")
