"""Provides ``Connection``: one MCP server, started (or reached), its tools listed, called, and stopped.

The official SDK (``mcp``) does the protocol. Its client is a context that must be
left in the task that entered it, so a task of the connection's own holds it open
from the start until ``stop``; calls are made from any task and their replies come
back through the client's own reader.

- **Protocol version.** The handshake (``mode="legacy"``) is used, not the SDK's
  ``"auto"``: ``auto`` first asks for the 2026 revision's ``server/discover``, which
  the servers people run today do not answer, and a server that never answers then
  costs that wait on top of the handshake's before it is said to be down.
- **Environment.** A stdio server gets the SDK's safe set of variables (``PATH``,
  ``HOME``, ``USER``, ``SHELL``, ``TERM``, ``LOGNAME``) and its own ``env``: never the
  person's API key or anything else Chimera was started with.
- **Its stderr** goes to ``log`` (a file in the session's folder), never to the
  terminal the workbench draws on.
- **Startup** waits ``startup_timeout`` at most; a server that fails, times out, exits
  or writes lines to stdout that are not the protocol is named in ``error`` or
  ``warnings`` in one line (the first such line quoted, once), and the connection's
  ``state`` says so. The SDK's own logging of those faults (a traceback a line) is
  kept off the terminal.
- **Calls** wait ``tool_timeout`` at most. A cancelled call (Escape) is cancelled at
  the server too (the SDK sends ``notifications/cancelled``). A server that dies
  mid-call fails the call, and is started again on the next use; one that exited
  between calls (``exited``) is started again by the next call, before it is sent.
- **Stop** closes the server's stdin, then sends TERM, then KILL (the SDK's own
  shutdown), so no server outlives the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import shutil
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TextIO

from chimera.core.mcp.config import ServerConfig
from chimera.core.mcp.results import McpOutput, result_text
from chimera.core.tools.shell import can_supervise

__all__ = ["CallFailed", "Connection", "ServerTool"]

State = Literal["off", "starting", "ready", "failed", "stopped"]
_CLIENT = ("chimera", "0.1.0")
_SHUTDOWN = 10.0  # seconds the SDK's shutdown may take (its own: 2 s for stdin, 2 s after TERM, then KILL)
_KEEPER = str(Path(__file__).with_name("keeper.py"))
_CONNECTION_CLOSED = -32000  # the SDK's error code for a connection that closed (mcp_types.CONNECTION_CLOSED)
_QUOTED = 80  # characters of a line that is not MCP quoted in its warning

# The SDK logs the faults of a server through ``logging`` (a traceback for each line of junk on its stdout), whose
# last resort is stderr: the terminal the workbench draws on, or the one line a headless run gives a fault. What
# matters of them reaches the person as the connection's ``error`` and ``warnings`` instead.
logging.getLogger("mcp").addHandler(logging.NullHandler())


class CallFailed(Exception):
    """A call that got no result: the server is down, died, timed out or refused the request; one line why."""


@dataclass(frozen=True, slots=True)
class ServerTool:
    """One tool as the server listed it (its own name), with what the model and the permissions need of it."""

    name: str
    title: str | None
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any] | None
    annotations: dict[str, Any]

    @property
    def read_only(self) -> bool:
        """Whether the server says the tool changes nothing (``readOnlyHint``); anything else counts as an action."""
        return self.annotations.get("readOnlyHint") is True


class Connection:
    """One configured server: ``start``, then ``tools`` and ``call``, then ``stop``."""

    def __init__(self, config: ServerConfig, log: Path, workdir: Path) -> None:
        self.config = config
        self.log = log
        self.workdir = workdir
        self.state: State = "off"
        self.error: str | None = None
        self.warnings: list[str] = []
        self.tools: list[ServerTool] = []
        self.tools_changed = False  # the server said its list changed: list again before the next request
        self.changed = asyncio.Event()  # set each time it says so (for whoever waits on it)
        self._client: Any = None
        self._output: Any = None  # the stream of what a stdio server writes: it ends when the server has gone
        self._holder: asyncio.Task[None] | None = None
        self._closing = asyncio.Event()

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    @property
    def up(self) -> bool:
        """Ready and still running, as a person is told (a server whose process has gone is not up)."""
        return self.ready and not self.exited

    @property
    def shown_state(self) -> str:
        """The state as a person is shown it: a ready server whose process has gone shows as ``exited``."""
        return "exited" if self.ready and self.exited else self.state

    @property
    def exited(self) -> bool:
        """Whether a stdio server's process has gone since it was started (its output ended), which the SDK's
        client leaves unsaid until a request fails."""
        return self._output is not None and self._output.statistics().open_send_streams == 0

    async def start(self) -> None:
        """Start (or reach) the server and list its tools; return once it is ready or has failed."""
        if not self.config.enabled:
            self.state, self.error = "off", "disabled in its settings"
            return
        self.state, self.error, self.warnings = "starting", None, []
        self._closing = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._holder = asyncio.create_task(self._hold(ready), name=f"mcp:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.startup_timeout)
        except TimeoutError:
            await self._end_holder(at_once=True)  # still in the handshake: nothing to wait for
            self._failed(f"did not answer within {self.config.startup_timeout:g} s (startup_timeout)")
        except CallFailed as err:
            await self._end_holder()
            self._failed(str(err))

    async def call(
        self, tool: str, args: dict[str, Any], on_progress: Callable[[float, float | None, str | None], object] | None
    ) -> McpOutput:
        """Call the server's tool ``tool``; its result read, or CallFailed saying why there is none."""
        if self.ready and self.exited:  # gone since its last call: a request now would fail as if it died in it
            await self._end_holder()
            self._failed(f"exited: see {self.log}")
        if not self.ready:
            await self.start()  # down since it died: started again on its next use
            if not self.ready:
                raise CallFailed(f"the MCP server {self.name} is down: {self.error}")
        if self.tools_changed:
            await self.list_tools()

        async def progress(done: float, total: float | None, message: str | None) -> None:
            if on_progress is not None:
                on_progress(done, total, message)

        try:
            result = await asyncio.wait_for(
                self._client.call_tool(tool, args, progress_callback=progress),
                self.config.tool_timeout,
            )
        except TimeoutError:
            raise CallFailed(f"no answer within {self.config.tool_timeout:g} s (tool_timeout)") from None
        except asyncio.CancelledError:
            raise
        except Exception as err:  # the SDK's and the transport's faults: the call has no result
            if getattr(err, "code", None) == _CONNECTION_CLOSED or (self._holder is not None and self._holder.done()):
                await self._end_holder()  # what is left of it reaped
                if self.config.command is None:  # reached at a URL: no process of ours, no log
                    self._failed("closed the connection during a call")
                    raise CallFailed(f"the MCP server {self.name} closed the connection during the call") from None
                self._failed("exited during a call")
                raise CallFailed(f"the MCP server {self.name} exited during the call: see {self.log}") from None
            raise CallFailed(_why(err)) from None
        return result_text(result)

    async def list_tools(self) -> None:
        """List the server's tools again (all pages)."""
        self.tools_changed = False
        listed = await self._client.list_tools()
        self.tools = [_server_tool(tool) for tool in listed.tools]

    async def stop(self) -> None:
        """Stop the server: stdin closed, then TERM, then KILL (the SDK's shutdown); idempotent."""
        await self._end_holder()
        if self.state in ("ready", "starting"):
            self.state = "stopped"

    # --- the task that holds the client open ------------------------------------------------

    async def _hold(self, ready: asyncio.Future[None]) -> None:
        try:
            self.log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)  # private: a server's words are its own
            with self.log.open("a", encoding="utf-8", errors="replace") as errlog:
                async with self._client_context(errlog) as client:
                    self._client = client
                    await self.list_tools()
                    self.state = "ready"
                    ready.set_result(None)
                    await self._closing.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as err:  # the server could not start, or ended: said once, never a traceback
            why = _why(err)
            if not ready.done():
                if getattr(_leaf(err), "code", None) == _CONNECTION_CLOSED:  # it went away before the handshake
                    why = (
                        f"exited before it was ready: see {self.log}"
                        if self.config.command is not None
                        else "closed the connection before it was ready"
                    )
                elif self.config.url is not None:
                    why = f"cannot reach {self.config.url}: {why}"
                ready.set_exception(CallFailed(why))
            elif not self._closing.is_set():
                self._failed(f"exited: {why}")
        finally:
            self._client = None

    @contextlib.asynccontextmanager
    async def _client_context(self, errlog: TextIO) -> AsyncIterator[Any]:
        """The SDK's client, connected: the server started with its stderr to ``errlog``, or reached at its URL."""
        from mcp import Client  # loaded when the first server starts, never before the first frame
        from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
        from mcp.client.streamable_http import streamable_http_client
        from mcp_types import Implementation

        config = self.config
        async with contextlib.AsyncExitStack() as stack:
            if config.command is not None:
                cwd = self.workdir / config.cwd if config.cwd is not None else self.workdir
                env = {**get_default_environment(), **config.env}
                command = [_program(config.command, cwd, env.get("PATH")), *config.args]
                if can_supervise():  # under a keeper: nothing the server starts outlives it
                    command = [sys.executable, "-I", "-S", _KEEPER, *command]
                parameters = StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=cwd)
                transport: Any = self._watched(stdio_client(parameters, errlog=errlog))
            else:
                import httpx2

                # The SDK's own timeouts for MCP: a server may hold a reply's stream open for minutes.
                timeout = httpx2.Timeout(30, read=300)
                http_client = httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout)
                http = await stack.enter_async_context(http_client)
                transport = streamable_http_client(str(config.url), http_client=http)
            client = Client(
                transport,
                mode="legacy",
                client_info=Implementation(name=_CLIENT[0], version=_CLIENT[1]),
                message_handler=self._on_message,
                list_roots_callback=self._roots,
                cache=None,
            )
            yield await stack.enter_async_context(client)

    @contextlib.asynccontextmanager
    async def _watched(self, transport: Any) -> AsyncIterator[Any]:
        """The stdio ``transport``'s streams, the one of the server's output kept for ``exited``."""
        async with transport as streams:
            self._output = streams[0]
            try:
                yield streams
            finally:
                self._output = None

    async def _roots(self, context: Any) -> Any:
        """The folders the server may work in, when it asks: the workspace (or a compare variant's copy)."""
        from mcp_types import ListRootsResult, Root

        return ListRootsResult(roots=[Root(uri=self.workdir.resolve().as_uri(), name="workspace")])  # type: ignore[arg-type]

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):  # a line that is not the protocol: said once, the first quoted
            said = "wrote to stdout" if self.config.command is not None else "sent"
            warning = f"{said} something that is not MCP"
            if not any(w.startswith(warning) for w in self.warnings):
                self.warnings.append(f"{warning}: {_not_mcp(message)}")
            return
        if getattr(getattr(message, "root", message), "method", "") == "notifications/tools/list_changed":
            self.tools_changed = True
            self.changed.set()

    async def _end_holder(self, *, at_once: bool = False) -> None:
        """End the task holding the client: let it leave the client (the SDK's shutdown: stdin closed, TERM,
        KILL), or, ``at_once``, cancel it (the SDK's shutdown runs all the same, shielded)."""
        holder, self._holder = self._holder, None
        if holder is None:
            return
        self._closing.set()
        if not at_once:
            with contextlib.suppress(TimeoutError, Exception):
                await asyncio.wait_for(asyncio.shield(holder), _SHUTDOWN)
        holder.cancel()
        with contextlib.suppress(BaseException):
            await holder

    def _failed(self, why: str) -> None:
        self.state, self.error = "failed", why


def _program(command: str, cwd: Path, path: str | None) -> str:
    """The server's program, found as the system would find it (on ``path``, or from ``cwd`` when the command
    names a folder); CallFailed, saying so, when there is none."""
    if "/" in command:
        found = (cwd / command) if not os.path.isabs(command) else Path(command)
        if os.access(found, os.X_OK) and found.is_file():
            return str(found)
        why = "is not an executable file" if found.exists() else "does not exist"
        raise CallFailed(f"its command {command} {why}")
    program = shutil.which(command, path=path or os.defpath)
    if program is None:
        raise CallFailed(f"its command {command} is not on its PATH ({path or os.defpath})")
    return program


def _server_tool(tool: Any) -> ServerTool:
    annotations = tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}
    return ServerTool(
        name=tool.name,
        title=tool.title,
        description=tool.description or "",
        input_schema=dict(tool.input_schema),
        output_schema=dict(tool.output_schema) if tool.output_schema is not None else None,
        annotations=annotations,
    )


def _leaf(err: BaseException) -> BaseException:
    """The fault itself, however the SDK or anyio wrapped it (an exception group: its first leaf)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    return err


def _why(err: BaseException) -> str:
    """One line for a fault."""
    err = _leaf(err)
    text = " ".join(str(err).split())
    if isinstance(err, CallFailed):
        return text  # Chimera's own words
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _not_mcp(err: Exception) -> str:
    """What a server sent that is not the protocol, as the SDK's parse error keeps it (pydantic's ``errors()``: the
    line, or the JSON read from it), quoted with control characters escaped and cut; the error in one line when it
    keeps nothing."""
    try:
        sent = next(e["input"] for e in err.errors() if "input" in e)  # type: ignore[attr-defined]
    except Exception:  # not pydantic's, or nothing kept
        return _why(err)
    line = sent if isinstance(sent, str) else json.dumps(sent, ensure_ascii=False, default=str)
    return repr(line if len(line) <= _QUOTED else f"{line[:_QUOTED]}…")
