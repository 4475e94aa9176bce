"""Provides ``client_servers``: the MCP servers an ACP client gives ``session/new``, as Chimera's ``ServerConfig``.

A stdio entry (``command``, ``args``, ``env``) is a server Chimera starts; an ``http`` entry (``url``,
``headers``) one it reaches over Streamable HTTP. Their values are used as given (no ``${VAR}`` is expanded:
the client has done that). The old SSE transport and ACP's own transport are refused in one line, as
``initialize`` says Chimera does not take them. A server the client names as one of Chimera's own settings
does is the client's, for this session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from acp.schema import AcpMcpServer, HttpMcpServer, McpServerStdio, SseMcpServer

from chimera.core.errors import ConfigError
from chimera.core.mcp.config import ServerConfig

__all__ = ["ORIGIN", "Entry", "client_servers", "merged"]

ORIGIN = "the ACP client's session"
Entry = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def client_servers(entries: Sequence[Entry]) -> tuple[ServerConfig, ...]:
    """``entries`` as servers; ConfigError naming the server and the fix for one Chimera cannot use."""
    servers: dict[str, ServerConfig] = {}
    for entry in entries:
        name = entry.name
        if not name.strip():
            raise ConfigError(f"{ORIGIN} names an MCP server with a blank name: give each server a name")
        match entry:
            case McpServerStdio(command=command, args=args, env=env):
                if not command.strip():
                    raise ConfigError(f"{ORIGIN}: the MCP server {name!r} has a blank command: give its program")
                servers[name] = ServerConfig(
                    name=name, origin=ORIGIN, command=command, args=tuple(args), env={e.name: e.value for e in env}
                )
            case HttpMcpServer(url=url, headers=headers):
                if not re.match(r"https?://", url):
                    raise ConfigError(f"{ORIGIN}: the MCP server {name!r} has the URL {url!r}: give an http(s) URL")
                servers[name] = ServerConfig(
                    name=name, origin=ORIGIN, url=url, headers={h.name: h.value for h in headers}
                )
            case SseMcpServer():
                raise ConfigError(
                    f"{ORIGIN}: the MCP server {name!r} uses the old SSE transport, which Chimera does not speak: "
                    "give its Streamable HTTP URL (type http)"
                )
            case _:
                raise ConfigError(
                    f"{ORIGIN}: the MCP server {name!r} is reached through the client (ACP transport), which Chimera "
                    "does not take: give its command (stdio) or its Streamable HTTP URL (http)"
                )
    return tuple(servers.values())


def merged(configured: Sequence[ServerConfig], given: Sequence[ServerConfig]) -> tuple[ServerConfig, ...]:
    """Chimera's configured servers, then the client's: a name in both is the client's."""
    return tuple({**{s.name: s for s in configured}, **{s.name: s for s in given}}.values())
