"""Sessions through `chimera acp`: the permission modes and session/set_mode, session/load of a branched session
(its active branch told as updates, then the next prompt goes on from it), an id this CHIMERA_HOME does not know,
the client's MCP servers, steering by a prompt sent while a run works, and the slash commands."""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp.schema import McpServerStdio, SseMcpServer

from chimera.core.messages import STEERING_LEAD
from tests.acp_helpers import DEADLINE, Agent, Client, of_kind, says, working_in
from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, paused, text, tool_use
from tests.mcp_helpers import everything_server

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_the_modes_are_the_permission_modes_and_set_mode_changes_them(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """A new session offers ask, accept-edits, plan and bypass, in ask; set_mode bypass is reported with a
    current_mode_update, and a command then runs unasked. A mode that does not exist is one line naming them."""
    api.script(
        message(tool_use("t1", "bash", {"command": "touch made-it"}), stop_reason="tool_use"), message(text("OK"))
    )
    made = await agent.open(project)
    await agent.conn.set_session_mode(session_id=made.session_id, mode_id="bypass")
    with pytest.raises(RequestError) as wrong:
        await agent.conn.set_session_mode(session_id=made.session_id, mode_id="yolo")
    done = await agent.prompt(made.session_id, "make the file")
    changed = await agent.client.until(lambda: of_kind(agent.client.updates, "current_mode_update") or None, "it")

    assert made.modes is not None
    assert [m.id for m in made.modes.available_modes] == ["ask", "accept-edits", "plan", "bypass"]
    assert made.modes.current_mode_id == "ask"
    assert [u.current_mode_id for u in changed] == ["bypass"]
    assert "'yolo' is unknown: use one of ask, accept-edits, plan, bypass" in str(wrong.value)
    assert done.stop_reason == "end_turn"
    assert agent.client.asked == []
    assert (project / "made-it").exists()


async def test_two_sessions_of_one_client_working_at_once_each_get_only_their_own_turn(
    api: FakeAnthropic, shared_api: FakeAnthropic, agent: Agent, project: Path, tmp_path: Path
) -> None:
    """Two sessions on one connection, in two folders, prompted together: each writes its own file, and each
    client hears only its own session's tool call and words (one agent serves an editor's many sessions)."""
    other = tmp_path / "other"
    other.mkdir()
    second = agent.joined(Client())

    def turn(words: str) -> list[Any]:
        return [
            message(tool_use("w1", "write", {"path": "said.txt", "content": f"{words}\n"}), stop_reason="tool_use"),
            message(text(f"Wrote {words}.")),
        ]

    api.script(*turn("first"))
    with shared_api.routed(working_in(other)) as other_api:
        other_api.script(*turn("second"))
        mine = await agent.new_session(project, mode="bypass")
        theirs = await second.new_session(other, mode="bypass")
        done = await asyncio.gather(agent.prompt(mine, "write first"), second.prompt(theirs, "write second"))

    assert [d.stop_reason for d in done] == ["end_turn", "end_turn"]
    assert ((project / "said.txt").read_text(), (other / "said.txt").read_text()) == ("first\n", "second\n")
    assert (says(agent.client.updates), says(second.client.updates)) == ("Wrote first.", "Wrote second.")
    for client, folder in ((agent.client, project), (second.client, other)):
        [call] = of_kind(client.updates, "tool_call")
        assert [loc.path for loc in call.locations] == [str(folder / "said.txt")]
    assert (len(api.requests), len(other_api.requests)) == (2, 2)


def branched_session(api: FakeAnthropic, model_env: dict[str, str], project: Path) -> str:
    """A session (made with `chimera run`, with ``model_env``'s CHIMERA_HOME) whose first answer has two
    branches: the second task's, left, and the third task's, where the session is now. Its id."""
    api.script(message(text("Answer A")), message(text("Answer B")), message(text("Answer C")))
    first = run_here("run", "first task", "--workdir", str(project), env=model_env)
    assert first.returncode == 0, first.stderr
    listed = json.loads(run_here("sessions", "--json", env=model_env).stdout)
    [session] = [s["id"] for s in listed if s["workdir"] == str(project)]
    assert run_here("run", "second task", "--resume", session, env=model_env).returncode == 0
    nodes = json.loads(run_here("tree", session, "--json", env=model_env).stdout)["nodes"]
    [answer_a] = [n["id"] for n in nodes if n["kind"] == "assistant" and "Answer A" in n["summary"]]
    assert run_here("switch", session, answer_a, "--yes", env=model_env).returncode == 0
    assert run_here("run", "third task", "--resume", session, env=model_env).returncode == 0
    return str(session)


async def test_load_tells_the_active_branch_then_answers_and_the_session_goes_on(
    api: FakeAnthropic, model_env: dict[str, str], agent: Agent, project: Path
) -> None:
    """session/load of a branched session: the person's words and the answers of the active branch come as updates
    before the answer (the branch left behind does not), and the next prompt continues from that branch. The
    client's cwd (another folder here) does not move the session from the folder it works in."""
    session = branched_session(api, {**model_env, "CHIMERA_HOME": str(agent.home)}, project)
    api.script(message(text("Answer D")))
    elsewhere = project.parent / "elsewhere"
    elsewhere.mkdir()
    loaded = await agent.load(session, elsewhere)
    told = list(agent.client.updates)
    done = await agent.prompt(session, "fourth task")

    assert loaded.modes is not None
    assert loaded.modes.current_mode_id == "ask"
    assert says(told, "user_message_chunk") == "first taskthird task"
    assert says(told) == "Answer AAnswer C"
    assert done.stop_reason == "end_turn"
    sent = json.dumps(api.requests[-1].messages)
    assert all(words in sent for words in ("first task", "Answer A", "third task", "Answer C", "fourth task"))
    assert "second task" not in sent
    assert "Answer B" not in sent


async def test_load_of_an_unknown_session_is_a_clear_error(agent: Agent, project: Path) -> None:
    """An id this CHIMERA_HOME does not know: a JSON-RPC error (resource not found) naming it and what to do."""
    with pytest.raises(RequestError) as unknown:
        await agent.load("nosuchsession", project)
    assert unknown.value.code == -32002
    assert "there is no session 'nosuchsession'" in str(unknown.value)
    assert "chimera sessions" in str(unknown.value)


async def test_the_clients_mcp_servers_give_their_tools_and_sse_is_refused(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """A stdio server the client names in session/new is started: its tool is offered and called (kind other,
    titled by its server); an SSE server is refused in one line that says what to give instead."""
    server = McpServerStdio(name="everything", command=str(everything_server()), args=["stdio"], env=[])
    api.script(
        message(tool_use("m1", "mcp__everything__echo", {"message": "hello"}), stop_reason="tool_use"),
        message(text("Echoed.")),
    )
    made = await agent.open(project, [server], mode="bypass")
    done = await agent.prompt(made.session_id, "echo hello")
    old = SseMcpServer(name="old", url="http://127.0.0.1:9/sse", headers=[], type="sse")
    with pytest.raises(RequestError) as sse:
        await agent.conn.new_session(cwd=str(project), mcp_servers=[old])

    assert done.stop_reason == "end_turn"
    assert any(tool["name"] == "mcp__everything__echo" for tool in api.requests[0].body["tools"])
    [call] = of_kind(agent.client.updates, "tool_call")
    assert (call.kind, call.title) == ("other", "everything: echo")
    [end] = [u for u in of_kind(agent.client.updates, "tool_call_update") if u.status == "completed"]
    assert "hello" in end.content[0].content.text
    assert "'old' uses the old SSE transport" in str(sse.value)
    assert "\n" not in str(sse.value)


async def test_a_prompt_sent_while_a_run_works_steers_it(api: FakeAnthropic, agent: Agent, project: Path) -> None:
    """A second prompt while the answer streams is steering: the same run reads it in one more turn (never a
    second run), and both prompts answer when that run ends."""
    release, reached = threading.Event(), threading.Event()
    api.script(paused(message(text("Working on it.")), release, reached), message(text("Steered.")))
    session = await agent.new_session(project)
    first = asyncio.create_task(agent.prompt(session, "write a poem"))
    assert await asyncio.to_thread(reached.wait, DEADLINE)
    second = asyncio.create_task(agent.prompt(session, "make it rhyme"))
    # Requests are taken in the order sent: once this one is answered, the prompt before it has been taken.
    with pytest.raises(RequestError) as busy:
        await agent.conn.set_session_mode(session_id=session, mode_id="bypass")
    release.set()
    done = await asyncio.gather(first, second)

    assert [d.stop_reason for d in done] == ["end_turn", "end_turn"]
    assert len(api.requests) == 2
    last = api.requests[1].messages[-1]
    assert STEERING_LEAD in json.dumps(last)
    assert "make it rhyme" in json.dumps(last)
    assert says(agent.client.updates) == "Working on it.Steered."
    assert "a run is going" in str(busy.value)  # and the mode waits for the run to end


async def test_commands_are_answered_without_the_model(api: FakeAnthropic, agent: Agent, project: Path) -> None:
    """The client is offered plan, compact, checkpoint, loop and model; /loop, /model, /compact and /checkpoint
    answer in one line (the model chosen is the next run's), an unknown /command names the commands, and none of
    them reaches the model."""
    api.script(message(text("Hello.")))
    session = await agent.new_session(project)
    offered = await agent.client.until(lambda: of_kind(agent.client.updates, "available_commands_update") or None, "it")
    said = []
    words_sent = ("/loop reflexion", "/checkpoint", "/nope now", "/compact", "/model claude-haiku-4-5", "hi")
    for words in (*words_sent, "/checkpoint first"):
        before = len(agent.client.updates)
        done = await agent.prompt(session, words)
        assert done.stop_reason == "end_turn"
        said.append(says(agent.client.updates[before:]).strip())

    assert [c.name for c in offered[0].available_commands] == ["plan", "compact", "checkpoint", "loop", "model"]
    assert said[0] == "The next runs use the strategy reflexion."
    assert said[1] == "/checkpoint: there is nothing to name yet: give Chimera a task first."
    assert said[2].startswith("/nope is not a command here: the commands are /plan, /compact")
    assert said[3] == "Nothing to compact: the conversation is still short."
    assert said[4] == "The next runs use the model claude-haiku-4-5."
    assert said[5] == "Hello."
    assert said[6].startswith("Checkpoint first names node ")
    assert len(api.requests) == 1
    assert api.requests[0].body["model"] == "claude-haiku-4-5"
