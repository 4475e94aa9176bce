"""Provides ``WorkspaceServers``: a workspace's own ``.mcp.json``, and whether the person has confirmed it.

A repository may carry a ``.mcp.json`` (Claude Code's project servers). Starting a server
runs a program, so one from a file the person has not seen never starts: the workbench
shows the file's servers and asks once (``confirm``), and the answer is kept for that
workspace with the file's SHA-256 in ``CHIMERA_HOME/mcp-trust.json`` (private, written
whole). When the file changes, its hash no longer matches and the workbench asks again.
A headless run never reads it: its servers come from the settings file and
``--mcp-config`` only, which the person named.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.mcp.config import ServerConfig, servers_from_json
from chimera.core.tools.files import NotRegularFile, open_regular

__all__ = ["PROJECT_FILE", "TRUST_NAME", "WorkspaceServers", "workspace_servers"]

PROJECT_FILE = ".mcp.json"
TRUST_NAME = "mcp-trust.json"
LARGEST = 1 << 20  # bytes, of either file


@dataclass(frozen=True, slots=True)
class WorkspaceServers:
    """The servers of a workspace's ``.mcp.json``, its hash, and whether the person confirmed this version of it."""

    path: Path
    digest: str
    servers: tuple[ServerConfig, ...]
    confirmed: bool

    def confirm(self, home: Path) -> None:
        """Keep the person's yes for this workspace and this version of the file (ConfigError if it cannot be)."""
        trusted = _trusted(home)
        trusted[str(self.path.parent)] = self.digest
        _write(home / TRUST_NAME, trusted)


def workspace_servers(workdir: Path, home: Path) -> WorkspaceServers | None:
    """The workspace's ``.mcp.json``, read (None when there is none); ConfigError, one line, when it is not a
    file of servers."""
    path = workdir / PROJECT_FILE
    origin = str(path)
    try:
        with open_regular(path) as fh:
            data = fh.read(LARGEST + 1)
    except FileNotFoundError:
        return None
    except NotRegularFile as err:
        raise ConfigError(f"{origin} is {err.kind}, not a file of MCP servers: remove it or make it one") from None
    except OSError as err:
        raise ConfigError(f"{origin} cannot be read: {err.strerror or err}") from None
    if len(data) > LARGEST:
        raise ConfigError(f"{origin} is over {LARGEST >> 20} MB, too big for a list of servers")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{origin} is not UTF-8 text: it should be the mcpServers JSON") from None
    digest = hashlib.sha256(data).hexdigest()
    servers = servers_from_json(text, origin, os.environ)
    return WorkspaceServers(path, digest, servers, _trusted(home).get(str(workdir)) == digest)


def _trusted(home: Path) -> dict[str, str]:
    """Workspace folder -> the hash of the ``.mcp.json`` confirmed there; a damaged file trusts nothing."""
    try:
        with open_regular(home / TRUST_NAME) as fh:
            data = fh.read(LARGEST + 1)
        trusted = json.loads(data) if len(data) <= LARGEST else {}
    except (OSError, ValueError, RecursionError):  # none yet, or damaged: nothing is trusted, asked again
        return {}
    if not isinstance(trusted, dict):
        return {}
    return {k: v for k, v in trusted.items() if isinstance(k, str) and isinstance(v, str)}


def _write(path: Path, trusted: dict[str, str]) -> None:
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)  # private: mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(trusted, fh, indent=1)
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as err:
        raise ConfigError(f"the answer could not be kept in {path}: {err.strerror or err}") from None
