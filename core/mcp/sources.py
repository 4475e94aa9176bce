"""Provides ``configured_servers``: the MCP servers a session uses, from the settings file and ``--mcp-config``.

A server named in both is the ``--mcp-config`` file's (the file given for this run wins
over the person's standing settings). The file is read as the settings file is: a
regular file of at most a megabyte, UTF-8, or one line saying what is wrong with it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.mcp.config import ServerConfig, servers_from_json
from chimera.core.tools.files import NotRegularFile, open_regular

__all__ = ["configured_servers"]

LARGEST = 1 << 20  # bytes: a list of servers is a few lines


def configured_servers(from_settings: Sequence[ServerConfig], file: Path | None) -> tuple[ServerConfig, ...]:
    """The settings file's servers, then ``file``'s (the mcpServers JSON), a name given twice taken from ``file``."""
    servers = {server.name: server for server in from_settings}
    if file is not None:
        origin = f"--mcp-config {file}"
        servers |= {server.name: server for server in servers_from_json(_read(file, origin), origin, os.environ)}
    return tuple(servers.values())


def _read(file: Path, origin: str) -> str:
    try:
        with open_regular(file) as fh:
            data = fh.read(LARGEST + 1)
    except FileNotFoundError:
        raise ConfigError(f"{origin}: no such file: give the path of a file of MCP servers (mcpServers JSON)") from None
    except NotRegularFile as err:
        raise ConfigError(f"{origin} is {err.kind}, not a file of MCP servers: give a regular file") from None
    except OSError as err:
        raise ConfigError(f"{origin} cannot be read: {err.strerror or err}") from None
    if len(data) > LARGEST:
        raise ConfigError(f"{origin} is over {LARGEST >> 20} MB, too big for a list of servers: check the path")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{origin} is not UTF-8 text: give the mcpServers JSON file") from None
