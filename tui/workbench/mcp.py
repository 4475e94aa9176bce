"""Provides ``McpPart``: the workbench's MCP servers, started after the first frame, and ``/mcp``.

Once the first frame is on screen the session's servers start (``started``); when each is
ready or has failed, a server that failed is said in one notice, and the status line shows
``mcp READY/CONFIGURED``. A workspace's own ``.mcp.json`` starts nothing until the person
says so: a notice names its servers and their commands, and ``/mcp trust`` starts them
(kept for that version of the file). ``/mcp`` opens the servers' panel (``tui.screens.mcp``: state,
transport, tools, the context their definitions cost, the last error and the log, with reconnect and
disable or enable); typed, ``/mcp reconnect NAME``
starts one again, ``/mcp disable NAME`` stops one for the session (its tools no longer
offered) and ``/mcp enable NAME`` starts it again. The help (F1) lists them too. Every
name, command and error shown is the servers' own text, drawn as it is.
"""

from __future__ import annotations

import shlex
from dataclasses import replace
from typing import TYPE_CHECKING

from chimera.core.errors import ConfigError
from chimera.core.mcp.names import server_part as names_server
from chimera.core.wording import plural
from chimera.tui.outside import tell
from chimera.tui.workbench.focus import open_screen

if TYPE_CHECKING:
    from chimera.core.mcp.servers import McpServers
    from chimera.tui.app import ChimeraApp

__all__ = ["McpPart"]


class McpPart:
    """``/mcp``, and the servers' start and notices."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self._said: set[str] = set()  # notices said once already

    def commands(self) -> dict[str, object]:
        return {"mcp": self.mcp}

    @property
    def servers(self) -> McpServers | None:
        return self.app.session.mcp

    def started(self) -> None:
        """After the first frame: start the servers, and say what needs saying once they are ready or failed."""
        servers = self.servers
        if servers is None:
            return
        servers.start()
        self._count()
        self.app.run_worker(self._announce(), group="mcp", exit_on_error=False)
        pending = self.app.session.mcp_unconfirmed
        if pending is not None:
            listed = "; ".join(f"{s.name} ({_how(s.command, s.args, s.url)})" for s in pending.servers)
            tell(
                self.app,
                f"This workspace's .mcp.json lists MCP servers: {listed}. None starts until you say so: "
                "/mcp trust starts them, now and whenever the file is unchanged.",
                severity="warning",
                timeout=12,
            )

    async def _announce(self) -> None:
        servers = self.servers
        if servers is None:
            return
        await servers.ready()
        self._count()
        for notice in servers.notices:
            if notice not in self._said:
                self._said.add(notice)
                tell(self.app, notice, severity="warning", timeout=10)

    def _count(self) -> None:
        servers = self.servers
        if servers is None:
            return
        ready, enabled = servers.counts
        self.app.conversation.show_status(mcp=f"mcp {ready}/{enabled}" if enabled else "")

    async def mcp(self, argument: str = "") -> None:
        """``/mcp`` opens the servers' panel; ``/mcp trust`` starts the workspace's; ``/mcp reconnect NAME`` starts
        one again, ``/mcp disable NAME`` and ``/mcp enable NAME`` stop and start one for the session."""
        words = argument.split(maxsplit=1)
        if not words:
            from chimera.tui.screens.mcp import McpScreen  # loaded with the panel, not before the first frame

            await open_screen(self.app, McpScreen(self))
        elif words[0] == "trust":
            self.trust()
        elif words[0] in ("reconnect", "enable", "disable") and len(words) == 2:
            await self.switch(words[0], words[1].strip())
        else:
            tell(
                self.app,
                "/mcp takes nothing, trust, or reconnect, enable or disable and a server's name.",
                severity="warning",
                timeout=6,
            )

    def waiting(self) -> list[str]:
        """The servers of the workspace's ``.mcp.json`` while it waits for ``/mcp trust``."""
        pending = self.app.session.mcp_unconfirmed
        return [server.name for server in pending.servers] if pending is not None else []

    def waiting_commands(self) -> list[str]:
        """What each server of the waiting ``.mcp.json`` would start: its command and arguments, or its URL."""
        pending = self.app.session.mcp_unconfirmed
        if pending is None:
            return []
        return [f"{server.name}: {_how(server.command, server.args, server.url)}" for server in pending.servers]

    def trust(self) -> None:
        try:
            names = self.app.session.confirm_workspace_servers()
        except ConfigError as err:
            tell(self.app, str(err), severity="warning", timeout=6)
            return
        started = ", ".join(names) if names else "none new (each is configured already)"
        self.app.conversation.say(f"Starting the MCP servers of .mcp.json: {started}.")
        self._count()
        self.app.run_worker(self._announce(), group="mcp", exit_on_error=False)

    async def switch(self, action: str, name: str) -> None:
        """``reconnect`` starts a server again; ``disable`` stops it, its tools no longer offered, for this session;
        ``enable`` starts it again."""
        servers = self.servers
        connection = next((c for c in servers.connections if c.name == name), None) if servers else None
        if connection is None:
            tell(self.app, f"No MCP server is named {name}: /mcp lists them.", severity="warning", timeout=6)
            return
        await connection.stop()
        if action == "disable":
            connection.config = replace(connection.config, enabled=False)
            await connection.start()  # off, saying why
            connection.error = "disabled for this session (/mcp enable NAME starts it)"
            word = "disabled: its tools are no longer offered"
        else:
            connection.config = replace(connection.config, enabled=True)
            await connection.start()
            word = "ready" if connection.ready else f"failed: {connection.error}"
        self._count()
        self.app.conversation.say(f"MCP server {name}: {word}.")

    def help_rows(self) -> list[tuple[str, str, str]]:
        """The help's lines about the servers: each one's name as rules write it, its state and its tools."""
        servers = self.servers
        if servers is None:
            return []
        rows = []
        for connection in servers.connections:
            tools = plural(len(connection.tools), "tool") if connection.ready else connection.shown_state
            clean = names_server(connection.name)
            rows.append(("", f"mcp__{clean}", f"{connection.name}: {tools} (rules: mcp__{clean}, mcp__{clean}__TOOL)"))
        return rows


def _how(command: str | None, args: tuple[str, ...], url: str | None) -> str:
    """How a server is reached, as a person reads it: its command line, or its URL."""
    return shlex.join([command, *args]) if command is not None else f"{url}"
