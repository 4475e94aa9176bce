"""Provides ``ServerConfig``, one MCP server as configured, and the two ways it is written.

In ``CHIMERA_HOME/config.toml``, a table a server (``servers_from_table``)::

    [mcp.servers.db]
    command = "uvx"                      # stdio: command, args, env, cwd
    args = ["mcp-server-sqlite", "--db-path", "${HOME}/app.db"]
    tool_timeout = 120                   # seconds a call may take (60)

    [mcp.servers.tracker]
    url = "https://mcp.example.com/mcp"  # Streamable HTTP: url, headers
    headers = { Authorization = "Bearer ${TRACKER_TOKEN}" }
    enabled_tools = ["search", "read_issue"]

and the ``mcpServers`` JSON of Claude Code's ``.mcp.json`` (``servers_from_json``),
which ``--mcp-config FILE`` takes. Both also take ``startup_timeout`` (10 s),
``enabled`` and ``disabled_tools``. ``[mcp] search_threshold`` (0.1) is the share of the
context window the tools' definitions may take before one search tool stands in for them
(``search.py``). ``${VAR}`` (or ``${VAR:-default}``) in a command,
its arguments, ``env``, ``cwd``, a URL or a header is the environment's value; one that
is not set and has no default is refused, naming it. Every fault is a ConfigError of
one line naming where it was read, the server, and the fix; a misspelled key names the
nearest known one, as the settings file does.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from chimera.core.errors import ConfigError

__all__ = ["ServerConfig", "expand", "search_threshold_from_table", "servers_from_json", "servers_from_table"]

STARTUP_TIMEOUT = 10.0
TOOL_TIMEOUT = 60.0
_STDIO = ("command", "args", "env", "cwd")
_HTTP = ("url", "headers")
_COMMON = ("startup_timeout", "tool_timeout", "enabled", "enabled_tools", "disabled_tools")
KNOWN_KEYS = (*_STDIO, *_HTTP, *_COMMON)
TABLE_KEYS = ("servers", "search_threshold")  # the keys of [mcp] itself
SEARCH_THRESHOLD = 0.1  # the share of the context window the tools' definitions may take before search stands in
_JSON_TYPES = {"stdio": "stdio", "http": "http", "streamable-http": "http", "streamableHttp": "http"}
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")

Transport = Literal["stdio", "http"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """One server: how to reach it, how long to wait for it, and which of its tools to offer."""

    name: str
    origin: str  # where it was read: a file's path, or "--mcp-config FILE"
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    startup_timeout: float = STARTUP_TIMEOUT
    tool_timeout: float = TOOL_TIMEOUT
    enabled: bool = True
    enabled_tools: tuple[str, ...] | None = None  # None: all of them
    disabled_tools: tuple[str, ...] = ()

    @property
    def transport(self) -> Transport:
        return "stdio" if self.command is not None else "http"

    def offers(self, tool: str) -> bool:
        """Whether the server's tool ``tool`` (its own name) is offered to the model."""
        listed = self.enabled_tools is None or tool in self.enabled_tools
        return listed and tool not in self.disabled_tools


def expand(text: str, environ: Mapping[str, str], where: str) -> str:
    """``text`` with each ``${VAR}`` (``${VAR:-default}``) replaced by its value; ConfigError for one not set."""

    def value(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise ConfigError(f"{where} uses ${{{name}}}, which is not set: set it, or write ${{{name}:-default}}")

    return _VARIABLE.sub(value, text)


def servers_from_table(table: object, origin: str, environ: Mapping[str, str]) -> tuple[ServerConfig, ...]:
    """The servers of the settings file's ``[mcp]`` table (``table``), read from ``origin``."""
    if not isinstance(table, dict):
        raise ConfigError(f"{origin}: [mcp] must be a table holding [mcp.servers.NAME] tables")
    for key in table:
        if key not in TABLE_KEYS:
            raise ConfigError(f"{origin}: unknown key mcp.{key}{_nearest(key, list(TABLE_KEYS))}")
    servers = table.get("servers", {})
    if not isinstance(servers, dict):
        raise ConfigError(f"{origin}: mcp.servers must be tables, one a server: [mcp.servers.NAME]")
    return tuple(_server(name, value, origin, f"mcp.servers.{name}", environ) for name, value in servers.items())


def search_threshold_from_table(table: object, origin: str) -> float:
    """``[mcp] search_threshold``: the share of the context window (above 0, at most 1) the MCP tools' definitions
    may take before ``mcp_search`` stands in for them; the default when it is not given."""
    value = table.get("search_threshold", SEARCH_THRESHOLD) if isinstance(table, dict) else SEARCH_THRESHOLD
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise ConfigError(
            f"{origin}: mcp.search_threshold must be a share of the context window above 0 and at most 1, "
            f"such as {SEARCH_THRESHOLD} (a tenth)"
        )
    return float(value)


def servers_from_json(text: str, origin: str, environ: Mapping[str, str]) -> tuple[ServerConfig, ...]:
    """The servers of an ``mcpServers`` JSON document (Claude Code's ``.mcp.json``), read from ``origin``."""
    try:
        document = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as err:
        why = f"line {err.lineno}: {err.msg}" if isinstance(err, json.JSONDecodeError) else "it nests too deeply"
        raise ConfigError(f'{origin} is not JSON ({why}): write {{"mcpServers": {{"NAME": {{...}}}}}}') from None
    if not isinstance(document, dict) or not isinstance(document.get("mcpServers"), dict):
        raise ConfigError(f'{origin} has no "mcpServers" object: write {{"mcpServers": {{"NAME": {{...}}}}}}')
    servers = []
    for name, value in document["mcpServers"].items():
        where = f"mcpServers.{name}"
        if isinstance(value, dict) and "type" in value:
            value = dict(value)
            kind = value.pop("type")
            _check_type(kind, value, origin, where)
        servers.append(_server(name, value, origin, where, environ))
    return tuple(servers)


def _check_type(kind: object, value: dict[str, Any], origin: str, where: str) -> None:
    if kind == "sse":
        raise ConfigError(
            f"{origin}: {where} uses the old SSE transport, which Chimera does not speak: "
            'give the server\'s Streamable HTTP URL with "type": "http"'
        )
    if kind not in _JSON_TYPES:
        raise ConfigError(f'{origin}: {where}.type {kind!r} is unknown: use "stdio" or "http"')
    wanted = "command" if _JSON_TYPES[str(kind)] == "stdio" else "url"
    if wanted not in value:
        raise ConfigError(f'{origin}: {where} is of type "{kind}" and needs "{wanted}"')


def _server(name: str, value: object, origin: str, where: str, environ: Mapping[str, str]) -> ServerConfig:
    if not name.strip():
        raise ConfigError(f"{origin}: a server has a blank name: name it, as in [mcp.servers.NAME]")
    if not isinstance(value, dict):
        raise ConfigError(f"{origin}: {where} must be a table of the server's settings (command or url, ...)")
    for key in value:
        if key not in KNOWN_KEYS:
            raise ConfigError(f"{origin}: unknown key {where}.{key}{_nearest(key, list(KNOWN_KEYS))}")
    has_command, has_url = "command" in value, "url" in value
    if has_command == has_url:
        how = "both a command and a url" if has_command else "neither a command nor a url"
        raise ConfigError(
            f"{origin}: {where} has {how}: give a command (a server Chimera starts) or a url (one it connects to)"
        )
    wrong = [k for k in (_HTTP if has_command else _STDIO) if k in value]
    if wrong:
        kind = "started by its command" if has_command else "reached at its url"
        raise ConfigError(f"{origin}: {where} is {kind}, so {where}.{wrong[0]} does not apply: remove it")

    def text(key: str) -> str:
        item = value[key]
        if not isinstance(item, str) or not item.strip():
            raise ConfigError(f"{origin}: {where}.{key} must be a non-blank string")
        return expand(item, environ, f"{origin}: {where}.{key}")

    def texts(key: str) -> tuple[str, ...]:
        items = value[key]
        if not isinstance(items, list) or not all(isinstance(i, str) for i in items):
            raise ConfigError(f'{origin}: {where}.{key} must be a list of strings, such as ["--flag", "value"]')
        return tuple(expand(i, environ, f"{origin}: {where}.{key}") for i in items)

    def table(key: str) -> dict[str, str]:
        items = value[key]
        if not isinstance(items, dict) or not all(isinstance(v, str) for v in items.values()):
            raise ConfigError(f'{origin}: {where}.{key} must map names to strings, such as {{ NAME = "value" }}')
        return {k: expand(v, environ, f"{origin}: {where}.{key}.{k}") for k, v in items.items()}

    def seconds(key: str, default: float) -> float:
        item = value.get(key, default)
        if isinstance(item, bool) or not isinstance(item, int | float) or not math.isfinite(item) or item <= 0:
            raise ConfigError(f"{origin}: {where}.{key} must be a number of seconds above 0, such as {default:g}")
        return float(item)

    enabled = value.get("enabled", True)
    if not isinstance(enabled, bool):
        raise ConfigError(f"{origin}: {where}.enabled must be true or false")
    url = text("url") if has_url else None
    if url is not None and not re.match(r"https?://", url):
        raise ConfigError(f"{origin}: {where}.url {url!r} is not an http:// or https:// URL")
    return ServerConfig(
        name=name,
        origin=origin,
        command=text("command") if has_command else None,
        args=texts("args") if "args" in value else (),
        env=table("env") if "env" in value else {},
        cwd=text("cwd") if "cwd" in value else None,
        url=url,
        headers=table("headers") if "headers" in value else {},
        startup_timeout=seconds("startup_timeout", STARTUP_TIMEOUT),
        tool_timeout=seconds("tool_timeout", TOOL_TIMEOUT),
        enabled=enabled,
        enabled_tools=texts("enabled_tools") if "enabled_tools" in value else None,
        disabled_tools=texts("disabled_tools") if "disabled_tools" in value else (),
    )


def _nearest(name: str, known: list[str]) -> str:
    near = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    return f": did you mean {near[0]}?" if near else f": the known ones are {', '.join(known)}"
