"""Provides what the tests of ``chimera acp`` share: the real command started as an editor starts it, driven by
the ACP SDK's own client side (``acp.connect_to_agent``: a ``ClientSideConnection`` on the process's stdin and
stdout), and a client that records every update and answers each permission question as the test says.

Every byte the agent writes to stdout is kept as it came (``Agent.raw``), to show it holds nothing but the
protocol; its stderr goes to a file. Waiting is for what the client has seen (``Client.until``), never a sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    PermissionOption,
    PromptResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.cli_runner import chimera_command

__all__ = [
    "DEADLINE",
    "Agent",
    "Answer",
    "Asked",
    "Client",
    "acp_agent",
    "cancelled",
    "choose",
    "fails",
    "of_kind",
    "says",
]

DEADLINE = 30.0  # a guard against a hung agent, never reached by a passing test
T = TypeVar("T")


@dataclass
class Asked:
    """One ``session/request_permission`` the client received."""

    tool_call: ToolCallUpdate
    options: list[PermissionOption]

    def option(self, kind: str) -> PermissionOption:
        return next(option for option in self.options if option.kind == kind)


Answer = Callable[[Asked], Awaitable[RequestPermissionResponse]]


def choose(kind: str) -> Answer:
    """Answer every question with its option of ``kind`` (``allow_once``, ``allow_always``, ``reject_once``)."""

    async def answer(asked: Asked) -> RequestPermissionResponse:
        chosen = asked.option(kind).option_id
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=chosen))

    return answer


async def cancelled(asked: Asked) -> RequestPermissionResponse:
    """The answer a client gives a question it will not put to the person (its turn was cancelled)."""
    return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


async def fails(asked: Asked) -> RequestPermissionResponse:
    """A client whose answer is a JSON-RPC error."""
    raise RequestError.internal_error({"details": "the client could not show the question"})


@dataclass
class Client:
    """The client side: every update in order, every question, each answered by ``answer``. It offers its files
    and terminals (``initialize`` says so) and notes any use of them, which Chimera never makes."""

    answer: Answer = field(default=choose("allow_once"))
    updates: list[Any] = field(default_factory=list)
    asked: list[Asked] = field(default_factory=list)
    reached: list[str] = field(default_factory=list)  # the client's own files and terminals the agent used
    _seen: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)
        self._seen.set()

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        self.reached.append(f"fs/read_text_file {path}")
        return ReadTextFileResponse(content="")

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> None:
        self.reached.append(f"fs/write_text_file {path}")

    async def create_terminal(self, session_id: str, command: str, **kwargs: Any) -> CreateTerminalResponse:
        self.reached.append(f"terminal/create {command}")
        return CreateTerminalResponse(terminal_id="t")

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        asked = Asked(tool_call, options)
        self.asked.append(asked)
        self._seen.set()
        return await self.answer(asked)

    def of(self, kind: str) -> list[Any]:
        return of_kind(self.updates, kind)

    async def until(self, found: Callable[[], T | None], what: str) -> T:
        """Wait until ``found()`` gives something (checked at each update or question); that thing."""
        try:
            async with asyncio.timeout(DEADLINE):
                while (thing := found()) is None:
                    self._seen.clear()
                    await self._seen.wait()
        except TimeoutError:
            raise AssertionError(f"the client never saw {what}") from None
        return thing


def of_kind(updates: list[Any], kind: str) -> list[Any]:
    """The updates of ``kind`` (their ``sessionUpdate``: ``tool_call``, ``agent_message_chunk``…)."""
    return [u for u in updates if u.session_update == kind]


def says(updates: list[Any], kind: str = "agent_message_chunk") -> str:
    """The text of every chunk of ``kind``, joined."""
    return "".join(u.content.text for u in of_kind(updates, kind))


@dataclass
class Agent:
    """A running ``chimera acp``: the client's connection to it, every line it wrote to stdout, its stderr."""

    conn: ClientSideConnection
    initialized: InitializeResponse
    process: asyncio.subprocess.Process
    raw: list[bytes]
    stderr_path: Path
    client: Client

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    async def new_session(self, cwd: Path) -> str:
        return (await self.conn.new_session(cwd=str(cwd), mcp_servers=[])).session_id

    async def prompt(self, session_id: str, words: str) -> PromptResponse:
        return await asyncio.wait_for(self.conn.prompt(session_id=session_id, prompt=[text_block(words)]), DEADLINE)


@contextlib.asynccontextmanager
async def acp_agent(
    model_env: dict[str, str], folder: Path, *args: str, client: Client | None = None, python: tuple[str, ...] = ()
) -> AsyncIterator[Agent]:
    """``chimera acp ARGS`` (``python``: interpreter flags, which run the launcher module) with ``model_env``,
    initialized by the SDK's client; stdin closed and the process waited for afterwards. Its stderr is kept in
    ``folder``."""
    command = [*chimera_command(), "acp", *args]
    if python:
        import sys

        command = [sys.executable, *python, "-m", "chimera.tui.launcher", "acp", *args]
    stderr_path = folder / "acp-stderr.txt"
    with stderr_path.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env={**os.environ, **model_env},
            limit=50 * 1024 * 1024,
        )
    assert process.stdin is not None
    assert process.stdout is not None
    raw: list[bytes] = []
    tee = asyncio.StreamReader(limit=50 * 1024 * 1024)
    pump = asyncio.create_task(_copy(process.stdout, tee, raw))
    client = client or Client()
    conn = connect_to_agent(client, process.stdin, tee)
    try:
        offered = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        initialized = await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=offered), DEADLINE
        )
        yield Agent(conn, initialized, process, raw, stderr_path, client)
    finally:
        process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), DEADLINE)
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
            await pump
            with contextlib.suppress(ConnectionError):  # an answer the client still had to send when the agent ended
                await conn.close()


async def _copy(source: asyncio.StreamReader, tee: asyncio.StreamReader, raw: list[bytes]) -> None:
    """Every line of ``source`` kept in ``raw`` and fed on to ``tee``, then its end."""
    while line := await source.readline():
        raw.append(line)
        tee.feed_data(line)
    tee.feed_eof()
