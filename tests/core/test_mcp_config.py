"""MCP servers as configured: the settings file's ``[mcp.servers.NAME]`` tables and the ``mcpServers`` JSON of
``.mcp.json``; ``${VAR}`` taken from the environment; every mistake one line naming where, the server and the
fix, a misspelled key with the nearest known one."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from chimera.core.errors import ConfigError
from chimera.core.mcp.config import ServerConfig, search_threshold_from_table, servers_from_json, servers_from_table

ENV = {"HOME": "/home/ada", "TOKEN": "t0k"}


def from_toml(text: str, environ: dict[str, str] = ENV) -> tuple[ServerConfig, ...]:
    return servers_from_table(tomllib.loads(text)["mcp"], "config.toml", environ)


def refused(text: str) -> str:
    with pytest.raises(ConfigError) as caught:
        from_toml(text)
    message = str(caught.value)
    assert "\n" not in message
    assert message.startswith("config.toml: ")
    return message


def test_a_stdio_and_an_http_server_are_read_with_their_defaults() -> None:
    """A command server and a URL server, ``${VAR}`` expanded; the timeouts 10 and 60 s unless given."""
    db, tracker = from_toml(
        """
        [mcp.servers.db]
        command = "uvx"
        args = ["mcp-server-sqlite", "--db-path", "${HOME}/app.db"]
        env = { LEVEL = "${LEVEL:-info}" }
        tool_timeout = 120

        [mcp.servers.tracker]
        url = "https://mcp.example.com/mcp"
        headers = { Authorization = "Bearer ${TOKEN}" }
        enabled_tools = ["search"]
        """
    )
    assert (db.transport, db.command) == ("stdio", "uvx")
    assert db.args == ("mcp-server-sqlite", "--db-path", "/home/ada/app.db")
    assert db.env == {"LEVEL": "info"}
    assert (db.startup_timeout, db.tool_timeout, db.enabled) == (10.0, 120.0, True)
    assert (tracker.transport, tracker.url) == ("http", "https://mcp.example.com/mcp")
    assert tracker.headers == {"Authorization": "Bearer t0k"}
    assert tracker.offers("search")
    assert not tracker.offers("delete_everything")


def test_disabled_tools_are_not_offered_and_a_disabled_server_is_kept_as_disabled() -> None:
    """``disabled_tools`` leaves those out; ``enabled = false`` is read (the server is then never started)."""
    (server,) = from_toml('[mcp.servers.fs]\ncommand = "srv"\ndisabled_tools = ["write"]\nenabled = false\n')
    assert server.offers("read")
    assert not server.offers("write")
    assert server.enabled is False


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ('[mcp.servers.db]\ncomand = "uvx"\n', "unknown key mcp.servers.db.comand: did you mean command?"),
        ('[mcp.server.db]\ncommand = "uvx"\n', "unknown key mcp.server: did you mean servers?"),
        ("[mcp.servers.db]\nargs = []\n", "has neither a command nor a url"),
        ('[mcp.servers.db]\ncommand = "a"\nurl = "http://x"\n', "has both a command and a url"),
        ('[mcp.servers.db]\nurl = "http://x"\nargs = ["a"]\n', "mcp.servers.db.args does not apply: remove it"),
        ('[mcp.servers.db]\ncommand = "a"\nheaders = {}\n', "mcp.servers.db.headers does not apply"),
        ('[mcp.servers.db]\ncommand = "a"\nargs = "--flag"\n', "must be a list of strings"),
        ('[mcp.servers.db]\ncommand = "a"\ntool_timeout = 0\n', "tool_timeout must be a number of seconds above 0"),
        ('[mcp.servers.db]\ncommand = "a"\nstartup_timeout = "10"\n', "startup_timeout must be a number"),
        ('[mcp.servers.db]\ncommand = "a"\nenabled = "no"\n', "enabled must be true or false"),
        ('[mcp.servers.db]\ncommand = "  "\n', "command must be a non-blank string"),
        ('[mcp.servers.db]\nurl = "file:///etc/passwd"\n', "is not an http:// or https:// URL"),
        ('[mcp.servers.db]\ncommand = "a"\nenv = { X = 1 }\n', "env must map names to strings"),
        ('[mcp.servers.db]\ncommand = "srv"\nargs = ["${NOPE}"]\n', "uses ${NOPE}, which is not set"),
        ('[mcp.servers.""]\ncommand = "srv"\n', "a server has a blank name"),
        ("[mcp]\nservers = 3\n", "mcp.servers must be tables"),
    ],
)
def test_a_mistake_is_one_line_naming_the_server_and_the_fix(text: str, needle: str) -> None:
    """Each fault of a server's table names itself and what to write instead."""
    assert needle in refused(text)


def test_claude_codes_mcp_json_is_read_as_it_is_written() -> None:
    """``.mcp.json`` with ``type`` stdio and http (and none: a command means stdio)."""
    text = json.dumps(
        {
            "mcpServers": {
                "files": {"type": "stdio", "command": "npx", "args": ["-y", "server-fs", "${HOME}"]},
                "plain": {"command": "srv"},
                "remote": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X-Key": "${TOKEN}"}},
            }
        }
    )
    files, plain, remote = servers_from_json(text, "--mcp-config m.json", ENV)
    assert files.args == ("-y", "server-fs", "/home/ada")
    assert files.origin == "--mcp-config m.json"
    assert plain.transport == "stdio"
    assert remote.transport == "http"
    assert remote.headers == {"X-Key": "t0k"}


@pytest.mark.parametrize(
    ("document", "needle"),
    [
        ("{not json", "is not JSON (line 1"),
        ('{"servers": {}}', 'has no "mcpServers" object'),
        ('{"mcpServers": {"x": {"type": "sse", "url": "http://h/sse"}}}', "old SSE transport"),
        ('{"mcpServers": {"x": {"type": "ws", "url": "ws://h"}}}', "mcpServers.x.type 'ws' is unknown"),
        ('{"mcpServers": {"x": {"type": "http", "command": "srv"}}}', 'is of type "http" and needs "url"'),
        ('{"mcpServers": {"x": {"cmd": "srv"}}}', "unknown key mcpServers.x.cmd"),
        ("[" * 100_000, "is not JSON"),
    ],
)
def test_a_bad_mcp_json_is_one_line(document: str, needle: str) -> None:
    """A file that is not the mcpServers JSON, or a server in it that cannot be used, is refused in one line."""
    with pytest.raises(ConfigError) as caught:
        servers_from_json(document, "m.json", ENV)
    assert needle in str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("value", ["0", "1.5", "true", '"ten percent"'])
def test_a_search_threshold_outside_a_share_of_the_window_is_one_line(value: str) -> None:
    """``[mcp] search_threshold`` is a share of the context window: 0 or below, over 1 or not a number is
    refused naming the default; 0.2 is read as it is."""
    table = tomllib.loads(f"[mcp]\nsearch_threshold = {value}\n")["mcp"]
    with pytest.raises(ConfigError, match=r"mcp.search_threshold must be a share .* such as 0.1"):
        search_threshold_from_table(table, "config.toml")
    assert search_threshold_from_table({"search_threshold": 0.2}, "config.toml") == 0.2
    assert search_threshold_from_table(None, "config.toml") == 0.1


def test_the_settings_file_gives_its_search_threshold(isolated_env: Path) -> None:
    """``[mcp] search_threshold`` in config.toml reaches the settings; a bad one is the settings file's one line."""
    from chimera.core.settings import load_settings

    (isolated_env / "config.toml").write_text("[mcp]\nsearch_threshold = 0.25\n")
    assert load_settings(isolated_env).mcp_search_threshold == 0.25
    (isolated_env / "config.toml").write_text("[mcp]\nsearch_threshold = 3\n")
    with pytest.raises(ConfigError, match=r"config.toml: mcp.search_threshold must be a share"):
        load_settings(isolated_env)
