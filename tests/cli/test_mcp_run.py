"""``chimera run`` with tools from MCP servers, end to end: the reference server (``mcp-server-everything``)
given by ``--mcp-config`` or the settings file, the model on the loopback Messages API. Its tools are offered
from the first request under their ``mcp__`` names; a call's result reaches the model; in ``ask`` mode a tool
that may change things is refused naming the rule that allows it; a server that cannot start is one line, and
the run goes on without it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.cli_runner import run_chimera, run_here
from tests.compare_helpers import named_session
from tests.fake_anthropic import FakeAnthropic, Reply, by_model, message, text, tool_use
from tests.mcp_helpers import everything_server, fault_server


def servers_file(folder: Path, **servers: dict[str, Any]) -> Path:
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def everything() -> dict[str, Any]:
    return {"command": str(everything_server()), "args": ["stdio"]}


def tool_result(request_messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The tool_result block of the last user message."""
    return next(b for b in request_messages[-1]["content"] if b.get("type") == "tool_result")


def test_a_servers_tool_is_offered_from_the_first_request_and_its_result_reaches_the_model(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """The real ``chimera run --mcp-config``: the first request lists ``mcp__everything__echo`` with the server's
    schema; the model calls it; the next request carries the server's answer."""
    config = servers_file(tmp_path, everything=everything())
    api.script(
        message(tool_use("e1", "mcp__everything__echo", {"message": "hello [/]"}), stop_reason="tool_use"),
        message(text("It echoed.")),
    )
    done = run_chimera("run", "echo it", "--workdir", str(project), "--mcp-config", str(config), env=model_env)
    assert done.returncode == 0, done.stderr
    offered = {tool["name"]: tool for tool in api.requests[0].body["tools"]}
    assert offered["mcp__everything__echo"]["input_schema"]["properties"]["message"]["type"] == "string"
    assert "read" in offered  # the built-in tools still there
    assert tool_result(api.requests[1].messages)["content"] == "Echo: hello [/]"
    assert "It echoed." in done.stdout


def test_in_ask_mode_a_headless_action_is_refused_naming_the_rule(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """A tool the server does not mark read-only would ask; headless, nobody can answer: refused, and the
    model is told which rule would let it run."""
    config = servers_file(tmp_path, everything=everything())
    call = tool_use("t1", "mcp__everything__toggle-simulated-logging", {})
    api.script(message(call, stop_reason="tool_use"), message(text("Could not.")))
    done = run_here("run", "toggle", "--workdir", str(project), "--mcp-config", str(config), "--permission-mode", "ask")
    assert done.returncode == 0, done.stderr
    refusal = tool_result(api.requests[1].messages)
    assert refusal["is_error"] is True
    assert "--allow mcp__everything__toggle-simulated-logging" in str(refusal["content"])


def test_servers_from_the_settings_file_and_a_broken_one_said_in_one_line(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """``[mcp.servers.NAME]`` in config.toml: the good server's tools are offered, the one whose command is
    missing is named on stderr in one line, and the run goes on."""
    (isolated_env / "config.toml").write_text(
        f'[mcp.servers.everything]\ncommand = "{everything_server()}"\n\n'
        '[mcp.servers.broken]\ncommand = "/nowhere/mcp-server"\n'
    )
    api.script(message(text("Fine.")))
    done = run_here("run", "look", "--workdir", str(project))
    assert done.returncode == 0, done.stderr
    assert any(tool["name"] == "mcp__everything__echo" for tool in api.requests[0].body["tools"])
    broken = [line for line in done.stderr.splitlines() if "broken" in line]
    assert len(broken) == 1
    assert broken[0].startswith("chimera: MCP server broken failed: ")


def test_a_server_that_writes_junk_on_stdout_is_one_line_on_stderr_and_its_tools_still_work(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """The real command (its own process, so nothing of this one's logging stands between): a server that prints
    log records and a banner on stdout before speaking MCP is named in one line on stderr, quoting the first, with
    no traceback;
    the model's call of its tool is answered."""
    command, args = fault_server("junk")
    config = servers_file(tmp_path, noisy={"command": command, "args": list(args)})
    api.script(
        message(tool_use("n1", "mcp__noisy__echo", {"text": "heard"}), stop_reason="tool_use"),
        message(text("Heard.")),
    )
    done = run_chimera("run", "listen", "--workdir", str(project), "--mcp-config", str(config), env=model_env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "JSONRPC" not in done.stderr  # the SDK's own words for it
    said = [line for line in done.stderr.splitlines() if line.startswith("chimera: MCP")]
    assert said == [
        "chimera: MCP server noisy wrote to stdout something that is not MCP: "
        """'{"level": "info", "msg": "fault server v1 starting"}'"""
    ]
    assert tool_result(api.requests[1].messages)["content"] == "heard"


def test_a_bad_mcp_config_is_one_line_before_anything_runs(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """A missing file, or a server with a misspelled key, is one line naming the fix; no request is sent."""
    missing = run_here("run", "x", "--workdir", str(project), "--mcp-config", str(tmp_path / "nope.json"))
    assert missing.returncode != 0
    assert "no such file" in missing.stderr
    assert len(missing.stderr.strip().splitlines()) == 1
    typo = servers_file(tmp_path, db={"comand": "srv"})
    misspelled = run_here("run", "x", "--workdir", str(project), "--mcp-config", str(typo))
    assert "unknown key mcpServers.db.comand: did you mean command?" in misspelled.stderr
    assert api.requests == []


def test_an_image_a_server_returns_reaches_the_model_as_an_image_block(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """The reference server's tiny image goes back to the model as an image block beside the result's text."""
    config = servers_file(tmp_path, everything=everything())
    api.script(
        message(tool_use("i1", "mcp__everything__get-tiny-image", {}), stop_reason="tool_use"),
        message(text("A logo.")),
    )
    done = run_here("run", "show it", "--workdir", str(project), "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    content = tool_result(api.requests[1].messages)["content"]
    kinds = [block["type"] for block in content]
    assert kinds[0] == "text"
    assert "image" in kinds
    image = next(block for block in content if block["type"] == "image")
    assert image["source"]["media_type"] == "image/png"
    assert image["source"]["type"] == "base64"


def test_a_recorded_call_replays_without_its_server_and_exports(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """``chimera replay --rerun-tools`` of a run that called an MCP tool keeps that call's recorded result (said
    as not re-run) and reports no divergence; no server is started. ``chimera export`` shows the call, its
    arguments and its result."""
    config = servers_file(tmp_path, everything=everything())
    api.script(
        message(tool_use("e1", "mcp__everything__echo", {"message": "once"}), stop_reason="tool_use"),
        message(text("Echoed.")),
    )
    done = run_here("run", "echo", "--workdir", str(project), "--mcp-config", str(config), "--json")
    assert done.returncode == 0, done.stderr
    session_id = json.loads(done.stdout.splitlines()[0])["session_id"]
    replayed = run_here("replay", session_id, "--rerun-tools")
    assert replayed.returncode == 0, replayed.stderr
    kept = [line for line in replayed.stderr.splitlines() if "not re-run" in line]
    assert len(kept) == 1
    assert "a replay never calls a server" in kept[0]
    assert "Echoed." in replayed.stdout
    exported = run_here("export", session_id)
    assert exported.returncode == 0, exported.stderr
    assert '**mcp\\_\\_everything\\_\\_echo** ` {"message": "once"} `' in exported.stdout  # the call
    assert "Echo: once" in exported.stdout.split("echo output:", 1)[1]  # and its result, under it


def test_each_compare_variant_gets_servers_of_its_own_started_in_its_copy(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path, isolated_env: Path
) -> None:
    """``chimera compare --mcp-config``: each variant's server starts in that variant's scratch copy (the file
    it writes where it starts shows in each variant's row, never in the workspace), and each variant's call of
    its tool is answered."""
    session_id = named_session(api, model_env, project, isolated_env)
    script = f'pwd > server-cwd.txt; exec "{everything_server()}" stdio'
    config = servers_file(tmp_path, everything={"command": "/bin/sh", "args": ["-c", script]})

    def echoes(model: str) -> list[Reply]:
        call = tool_use("e1", "mcp__everything__echo", {"message": model})
        return [message(call, stop_reason="tool_use", model=model), message(text(f"{model} done"), model=model)]

    api.responder = by_model({"model-a": echoes("model-a"), "model-b": echoes("model-b")})
    args = ["--from", "before-v2", "--try", "model=model-a", "--try", "model=model-b", "--json"]
    done = run_here("compare", session_id, *args, "--mcp-config", str(config), "--permission-mode", "bypass")
    assert done.returncode == 0, done.stderr
    rows = {row["label"]: row for row in json.loads(done.stdout.splitlines()[-1])["rows"]}
    for label in ("model-a", "model-b"):
        assert rows[label]["outcome"] == "completed", rows[label]
        assert "server-cwd.txt" in [change["path"] for change in rows[label]["files"]]
    assert not (project / "server-cwd.txt").exists()
    answered = [str(r.messages[-1]["content"]) for r in api.requests if "Echo: model-" in str(r.messages[-1])]
    assert len(answered) == 2


def test_independent_calls_of_a_servers_read_only_tool_run_together(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """Two calls in one message of a tool the server marks read-only are at work at the same time: each waits for
    the other at the server, and both say they met (one after the other, each would wait alone)."""
    command, args = fault_server()
    config = servers_file(tmp_path, fault={"command": command, "args": list(args)})
    api.script(
        message(
            tool_use("m1", "mcp__fault__meet", {"name": "first", "expected": 2}),
            tool_use("m2", "mcp__fault__meet", {"name": "second", "expected": 2}),
            stop_reason="tool_use",
        ),
        message(text("They met.")),
    )
    done = run_chimera("run", "meet", "--workdir", str(project), "--mcp-config", str(config), env=model_env)
    assert done.returncode == 0, done.stderr
    results = [b["content"] for b in api.requests[1].messages[-1]["content"] if b.get("type") == "tool_result"]
    assert results == ["first met the others", "second met the others"]
