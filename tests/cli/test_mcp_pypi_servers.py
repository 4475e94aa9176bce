"""``chimera run`` with the MCP reference servers published on PyPI (``mcp-server-time`` and ``mcp-server-git``,
pinned in the ``test`` extra), the model on the loopback Messages API: the model calls them by their ``mcp__``
names, and the requests the API received show what reached the model. The time server converts and tells the time;
the git server reads the status and log of a real repository in the project folder; a server that refuses its own
arguments at start is one line naming its log, which holds its words, and the run goes on without it."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.cli_runner import run_here
from tests.fake_anthropic import FakeAnthropic, message, text, tool_use
from tests.git_helpers import git


def servers_file(folder: Path, **servers: list[str]) -> Path:
    """An ``mcpServers`` file starting each named server as ``python -m MODULE ARGS`` with this Python."""
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {n: {"command": sys.executable, "args": a} for n, a in servers.items()}}))
    return path


def results(request_messages: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The tool_result blocks of the last user message, by the id of the call each answers."""
    return {b["tool_use_id"]: b for b in request_messages[-1]["content"] if b.get("type") == "tool_result"}


def test_the_time_servers_answers_reach_the_model(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """The model asks ``mcp__time__convert_time`` and ``mcp__time__get_current_time`` in one message; the next
    request carries each answer as the server gave it: 09:30 UTC is 18:30 in Tokyo, nine hours ahead, and Tokyo's
    time now."""
    config = servers_file(tmp_path, time=["-m", "mcp_server_time", "--local-timezone", "UTC"])
    convert = {"source_timezone": "UTC", "time": "09:30", "target_timezone": "Asia/Tokyo"}
    api.script(
        message(
            tool_use("c1", "mcp__time__convert_time", convert),
            tool_use("n1", "mcp__time__get_current_time", {"timezone": "Asia/Tokyo"}),
            stop_reason="tool_use",
        ),
        message(text("Evening in Tokyo.")),
    )
    asked = datetime.now(UTC)
    done = run_here("run", "what time is it in Tokyo", "--workdir", str(project), "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    offered = {tool["name"] for tool in api.requests[0].body["tools"]}
    assert {"mcp__time__convert_time", "mcp__time__get_current_time"} <= offered
    answers = results(api.requests[1].messages)
    assert not answers["c1"].get("is_error"), answers["c1"]
    converted = json.loads(answers["c1"]["content"])
    assert converted["time_difference"] == "+9.0h"
    assert converted["target"]["timezone"] == "Asia/Tokyo"
    assert converted["target"]["datetime"].endswith("T18:30:00+09:00")
    now = json.loads(answers["n1"]["content"])
    assert now["timezone"] == "Asia/Tokyo"
    tokyo = datetime.fromisoformat(now["datetime"])
    assert tokyo.utcoffset() == timedelta(hours=9)
    assert abs(tokyo - asked) < timedelta(minutes=5)
    assert "Evening in Tokyo." in done.stdout


def test_the_git_servers_status_and_log_of_the_project_reach_the_model(
    api: FakeAnthropic, model_env: dict[str, str], git_project: Path, tmp_path: Path
) -> None:
    """In the person's repository (one commit, README changed, a new file), the model asks ``mcp__git__git_status``
    and ``mcp__git__git_log`` of the server confined to it; the next request carries the server's status (the
    change and the new file) and its log (the commit, by hash and message)."""
    (git_project / "README.md").write_text("project, changed\n")
    (git_project / "notes.txt").write_text("new\n")
    head = git(git_project, "rev-parse", "HEAD").strip()
    repo = str(git_project)
    config = servers_file(tmp_path, git=["-m", "mcp_server_git", "--repository", repo])
    api.script(
        message(
            tool_use("s1", "mcp__git__git_status", {"repo_path": repo}),
            tool_use("l1", "mcp__git__git_log", {"repo_path": repo, "max_count": 5}),
            stop_reason="tool_use",
        ),
        message(text("One commit, one change.")),
    )
    done = run_here("run", "what changed", "--workdir", repo, "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    answers = results(api.requests[1].messages)
    status, log = answers["s1"], answers["l1"]
    assert not status.get("is_error"), status
    assert status["content"].startswith("Repository status:\n")
    assert "modified:   README.md" in status["content"]
    assert "notes.txt" in status["content"]
    assert not log.get("is_error"), log
    assert f"Commit: {head}" in log["content"]
    assert "Message: start" in log["content"]


def test_a_server_that_refuses_its_arguments_is_one_line_naming_its_log_and_the_run_goes_on(
    api: FakeAnthropic, model_env: dict[str, str], project: Path, tmp_path: Path
) -> None:
    """The time server given a timezone that does not exist exits at start with its own one-line error: chimera
    says, in one line, that it exited before it was ready and where its log is; the log holds the server's words;
    the good server beside it is offered."""
    config = servers_file(
        tmp_path,
        mars=["-m", "mcp_server_time", "--local-timezone", "Mars/Olympus_Mons"],
        time=["-m", "mcp_server_time", "--local-timezone", "UTC"],
    )
    api.script(message(text("Fine.")))
    done = run_here("run", "look", "--workdir", str(project), "--mcp-config", str(config))
    assert done.returncode == 0, done.stderr
    (said,) = [line for line in done.stderr.splitlines() if "mars" in line]
    assert said.startswith("chimera: MCP server mars failed: exited before it was ready: see ")
    log = Path(said.rsplit("see ", 1)[1])
    assert "invalid --local-timezone 'Mars/Olympus_Mons': not a known IANA timezone name" in log.read_text()
    offered = {tool["name"] for tool in api.requests[0].body["tools"]}
    assert "mcp__time__get_current_time" in offered
    assert not any(name.startswith("mcp__mars__") for name in offered)
