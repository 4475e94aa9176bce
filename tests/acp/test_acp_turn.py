"""`chimera acp` through the ACP SDK's client: what it says it takes, and a whole turn as a client sees it (the
model's thinking and words streamed, a read, an edit with its diff, a command with its output, each with its kind,
status and absolute locations), and the stop reason each way a turn can end. The tests share the worker's
agent (``agent``), but for those of a startup option or an environment of their own."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.tui.cli import installed_version
from tests.acp_helpers import Agent, acp_agent, of_kind, says
from tests.fake_anthropic import FakeAnthropic, message, text, thinking, tool_use

pytestmark = pytest.mark.asyncio(loop_scope="session")


async def test_initialize_says_what_chimera_takes(agent: Agent) -> None:
    """The client learns Chimera loads sessions, takes text, embedded context and images, MCP servers over stdio and
    HTTP (not SSE), needs no authentication, and its name and version."""
    answer = agent.initialized
    caps = answer.agent_capabilities
    assert answer.protocol_version == 1
    assert caps is not None
    assert caps.load_session is True
    assert caps.prompt_capabilities is not None
    assert (caps.prompt_capabilities.image, caps.prompt_capabilities.embedded_context) == (True, True)
    assert caps.prompt_capabilities.audio is False
    assert caps.mcp_capabilities is not None
    assert (caps.mcp_capabilities.http, caps.mcp_capabilities.sse) == (True, False)
    assert answer.auth_methods == []
    assert answer.agent_info is not None
    assert (answer.agent_info.name, answer.agent_info.version) == ("chimera", installed_version())


async def test_a_whole_turn_streams_thinking_text_and_each_tool_call(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """Thinking and text arrive as chunks; a read, an edit and a command each come as a tool_call (kind, absolute
    location, the edit's diff) then a completed tool_call_update (the command's output); the turn ends end_turn.
    The tools ran inside Chimera: the client's files and terminals, offered, were never used."""
    (project / "notes.txt").write_text("one\ntwo\n")
    api.script(
        message(
            thinking("The notes first.", "sig"),
            text("Reading the notes."),
            tool_use("r1", "read", {"path": "notes.txt"}),
            stop_reason="tool_use",
        ),
        message(tool_use("e1", "edit", {"path": "notes.txt", "old": "two\n", "new": "TWO\n"}), stop_reason="tool_use"),
        message(tool_use("b1", "bash", {"command": "printf 'lines: '; wc -l < notes.txt"}), stop_reason="tool_use"),
        message(text("The notes now say TWO.")),
    )
    session = await agent.new_session(project, mode="bypass")
    done = await agent.prompt(session, "shout the second note")
    seen = agent.client.updates

    assert done.stop_reason == "end_turn"
    assert says(seen, "agent_thought_chunk") == "The notes first."
    assert says(seen) == "Reading the notes.The notes now say TWO."
    read, edit, command = of_kind(seen, "tool_call")
    assert (read.kind, read.title, read.status) == ("read", "Read notes.txt", "pending")
    assert [loc.path for loc in read.locations] == [str(project / "notes.txt")]
    assert edit.kind == "edit"
    [diff] = edit.content
    assert (diff.type, diff.path, diff.old_text, diff.new_text) == (
        "diff",
        str(project / "notes.txt"),
        "two\n",
        "TWO\n",
    )
    assert command.kind == "execute"
    ends = {u.tool_call_id: u for u in of_kind(seen, "tool_call_update") if u.status in ("completed", "failed")}
    assert {ends[c.tool_call_id].status for c in (read, edit, command)} == {"completed"}
    assert "2\ttwo" in ends[read.tool_call_id].content[0].content.text  # the file as the model read it, before the edit
    assert ends[edit.tool_call_id].content[0].type == "diff"
    assert "lines: 2" in ends[command.tool_call_id].content[0].content.text
    assert (project / "notes.txt").read_text() == "one\nTWO\n"
    assert agent.client.reached == []


async def test_a_refusal_and_the_turn_limit_each_end_the_turn_with_their_stop_reason(
    api: FakeAnthropic, model_env: dict[str, str], project: Path
) -> None:
    """The model declining ends the turn with refusal; a run that reaches --max-turns ends with max_turn_requests,
    and says why."""
    api.script(
        message(text("I will not do that."), stop_reason="refusal"),
        message(tool_use("g1", "glob", {"pattern": "*"}), stop_reason="tool_use"),
        message(text("never asked for")),
    )
    async with acp_agent(model_env, project, "--max-turns", "1", "--permission-mode", "bypass") as agent:
        session = await agent.new_session(project)
        declined = await agent.prompt(session, "something it declines")
        limited = await agent.prompt(session, "look around")
        seen = agent.client.updates

    assert declined.stop_reason == "refusal"
    assert limited.stop_reason == "max_turn_requests"
    assert says(seen).endswith("Stopped after 1 turn (the limit): raise --max-turns to let it go on.\n\n")
    assert len(api.requests) == 2


async def test_a_run_that_fails_answers_the_prompt_with_one_line(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """A server that refuses the key fails the prompt with a JSON-RPC error whose message names the cause."""
    from acp import RequestError

    from tests.fake_anthropic import status

    api.script(status(401, "authentication_error", "invalid x-api-key"))
    session = await agent.new_session(project)
    try:
        await agent.prompt(session, "hello")
    except RequestError as err:
        failure = str(err)
    else:
        raise AssertionError("the prompt did not fail")
    assert "\n" not in failure
    assert "key" in failure.lower()


async def test_a_prompt_of_text_an_image_a_file_and_embedded_context_reaches_the_model(
    api: FakeAnthropic, agent: Agent, project: Path
) -> None:
    """The model gets the words, the picture as an image block, the file pointed at by its path and the embedded
    text in a context block naming it; a picture of a kind the model does not take is one line, nothing sent."""
    from acp import RequestError, embedded_text_resource, image_block, resource_block, resource_link_block, text_block

    api.script(message(text("A red dot.")))
    picture = "iVBORw0KGgo="  # the content is the model's business: it is passed as given
    blocks = [
        text_block("what is this?"),
        image_block(picture, "image/png"),
        resource_link_block("notes.txt", (project / "notes.txt").as_uri()),
        resource_block(embedded_text_resource((project / "a.py").as_uri(), "print(1)\n")),
    ]
    session = await agent.new_session(project)
    done = await agent.conn.prompt(session_id=session, prompt=blocks)
    try:
        await agent.conn.prompt(session_id=session, prompt=[image_block(picture, "image/bmp")])
    except RequestError as err:
        refused = str(err)
    else:
        raise AssertionError("a BMP was taken")

    assert done.stop_reason == "end_turn"
    content = api.requests[0].messages[-1]["content"]
    assert content[0] == {"type": "text", "text": "what is this?"}
    assert content[1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": picture}}
    assert content[2]["text"] == f"@{project / 'notes.txt'}"
    assert content[3]["text"] == f'<context ref="{project / "a.py"}">\nprint(1)\n\n</context>'
    assert refused.startswith("an image is image/bmp, which the model does not take: send ")
    assert len(api.requests) == 1


async def test_without_a_model_a_session_is_refused_in_one_line(project: Path) -> None:
    """With no key and no server configured, session/new says what to set (the workbench's demo is not played)."""
    from acp import RequestError

    async with acp_agent({}, project) as agent:
        try:
            await agent.new_session(project)
        except RequestError as err:
            refused = str(err)
        else:
            raise AssertionError("a session opened with no model")
    assert refused.startswith("no model is configured: set ANTHROPIC_API_KEY")
