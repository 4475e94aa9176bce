"""Provides what the tests of ``chimera acp`` share: the real command started as an editor starts it, driven by
the ACP SDK's own client side (``acp.connect_to_agent``: a ``ClientSideConnection`` on the process's stdin and
stdout), and a client that records every update and answers each permission question as the test says.

Most tests share one agent process (``shared_acp_agent``, a fixture's for the test worker), as an editor keeps one
agent for many sessions: each test opens sessions of its own in its own folder, and ``Clients`` hands each
session's updates and questions to that test's ``Client`` (``Agent.joined``). A test that needs a process of its
own (its options, its stdout, its environment) starts one with ``acp_agent``. The model is the loopback server's:
``working_in`` picks out the requests of sessions working in a test's folder, for that test's routed model.

Every byte the agent writes to stdout is kept as it came (``Agent.raw``), to show it holds nothing but the
protocol; its stderr goes to a file. Waiting is for what the client has seen (``Client.until``), never a sleep.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    FileSystemCapabilities,
    InitializeResponse,
    LoadSessionResponse,
    McpServerStdio,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from tests.anthropic_harness import direct_environment
from tests.cli_runner import chimera_command
from tests.fake_anthropic import DEFAULT_MODEL

if TYPE_CHECKING:
    from acp.interfaces import Client as ProtocolClient

__all__ = [
    "DEADLINE",
    "Agent",
    "Answer",
    "Asked",
    "Client",
    "Clients",
    "acp_agent",
    "cancelled",
    "choose",
    "fails",
    "of_kind",
    "says",
    "shared_acp_agent",
    "working_in",
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
        self.saw(update)

    def saw(self, update: Any) -> None:
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


@dataclass
class Clients:
    """The client side of one connection, handing each session's updates, questions and file and terminal calls
    to the ``Client`` that claimed the session (``default`` when none did: a process of one test's own). An
    update for a session not claimed yet (sent as ``session/new`` is answered) is kept for the client that
    claims it."""

    default: Client | None = None
    claimed: dict[str, Client] = field(default_factory=dict)
    waiting: dict[str, list[Any]] = field(default_factory=dict)

    def claim(self, session_id: str, client: Client) -> None:
        self.claimed[session_id] = client
        for update in self.waiting.pop(session_id, []):
            client.saw(update)

    def _of(self, session_id: str) -> Client:
        client = self.claimed.get(session_id, self.default)
        if client is None:
            raise RequestError.internal_error({"details": f"no test claimed session {session_id}"})
        return client

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        if session_id in self.claimed or self.default is not None:
            self._of(session_id).saw(update)
        else:
            self.waiting.setdefault(session_id, []).append(update)

    async def read_text_file(self, session_id: str, path: str, **kwargs: Any) -> ReadTextFileResponse:
        return await self._of(session_id).read_text_file(session_id, path, **kwargs)

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> None:
        await self._of(session_id).write_text_file(session_id, path, content, **kwargs)

    async def create_terminal(self, session_id: str, command: str, **kwargs: Any) -> CreateTerminalResponse:
        return await self._of(session_id).create_terminal(session_id, command, **kwargs)

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kwargs: Any
    ) -> RequestPermissionResponse:
        return await self._of(session_id).request_permission(session_id, tool_call, options, **kwargs)


def of_kind(updates: list[Any], kind: str) -> list[Any]:
    """The updates of ``kind`` (their ``sessionUpdate``: ``tool_call``, ``agent_message_chunk``…)."""
    return [u for u in updates if u.session_update == kind]


def says(updates: list[Any], kind: str = "agent_message_chunk") -> str:
    """The text of every chunk of ``kind``, joined."""
    return "".join(u.content.text for u in of_kind(updates, kind))


def working_in(folder: Path) -> Callable[[Any], bool]:
    """Whether a Messages API request is a run's in ``folder`` (its system prompt names that workspace): the
    ``matches`` of a test's routed model (``FakeAnthropic.routed``)."""
    lines = {f"Workspace: {folder}", f"Workspace: {folder.resolve()}"}

    def matches(body: Any) -> bool:
        system = body.get("system") if isinstance(body, dict) else None
        return isinstance(system, str) and not lines.isdisjoint(system.splitlines())

    return matches


@dataclass
class Agent:
    """A running ``chimera acp`` as one test's client sees it: the connection, every line the process wrote to
    stdout, its stderr, its ``CHIMERA_HOME``; ``client`` gets the updates and questions of the sessions this
    test opened or loaded (through ``open``, ``new_session`` and ``load``)."""

    conn: ClientSideConnection
    initialized: InitializeResponse
    process: asyncio.subprocess.Process
    raw: list[bytes]
    stderr_path: Path
    client: Client
    clients: Clients
    home: Path
    opened: list[str] = field(default_factory=list)

    @property
    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def joined(self, client: Client) -> Agent:
        """This process as another test's client ``client`` sees it: the sessions it opens are its own."""
        return dataclasses.replace(self, client=client, opened=[])

    async def open(
        self, cwd: Path, mcp_servers: Sequence[McpServerStdio] = (), *, mode: str | None = None
    ) -> NewSessionResponse:
        """``session/new`` in ``cwd``, claimed for this test's client; then ``session/set_mode`` to ``mode``."""
        made = await self.conn.new_session(cwd=str(cwd), mcp_servers=list(mcp_servers))
        self._claim(made.session_id)
        if mode is not None:
            await self.conn.set_session_mode(session_id=made.session_id, mode_id=mode)
        return made

    async def new_session(self, cwd: Path, *, mode: str | None = None) -> str:
        return (await self.open(cwd, mode=mode)).session_id

    async def load(self, session_id: str, cwd: Path) -> LoadSessionResponse:
        """``session/load``, its updates (the session told again) claimed for this test's client first."""
        self._claim(session_id)
        return await self.conn.load_session(cwd=str(cwd), session_id=session_id, mcp_servers=[])

    async def prompt(self, session_id: str, words: str) -> PromptResponse:
        return await asyncio.wait_for(self.conn.prompt(session_id=session_id, prompt=[text_block(words)]), DEADLINE)

    async def leave(self) -> None:
        """Cancel whatever the sessions this test opened still do (a test that failed half-way)."""
        if self.process.returncode is None:
            for session_id in self.opened:
                with contextlib.suppress(ConnectionError):
                    await self.conn.cancel(session_id=session_id)

    def _claim(self, session_id: str) -> None:
        self.opened.append(session_id)
        self.clients.claim(session_id, self.client)


@contextlib.asynccontextmanager
async def acp_agent(
    model_env: dict[str, str], folder: Path, *args: str, client: Client | None = None, python: tuple[str, ...] = ()
) -> AsyncIterator[Agent]:
    """A ``chimera acp ARGS`` of the test's own (``python``: interpreter flags, which run the launcher module)
    with this process's environment and ``model_env``, initialized by the SDK's client; stdin closed and the
    process waited for afterwards. Its stderr is kept in ``folder``."""
    command = [*chimera_command(), "acp", *args]
    if python:
        import sys

        command = [sys.executable, *python, "-m", "chimera.tui.launcher", "acp", *args]
    client = client or Client()
    async with _started(command, {**os.environ, **model_env}, folder, Clients(default=client), client) as agent:
        yield agent


@contextlib.asynccontextmanager
async def shared_acp_agent(api_url: str, folder: Path, writable: Path) -> AsyncIterator[Agent]:
    """A ``chimera acp`` with no options, for many tests in turn (``Agent.joined``): the model at ``api_url``,
    a ``CHIMERA_HOME`` of its own in ``folder``, and commands allowed to write under ``writable`` (where the
    tests' folders are). None of the machine's model settings or proxies reach it."""
    home = folder / "home"
    home.mkdir()
    env = {
        **direct_environment(os.environ),
        "CHIMERA_HOME": str(home),
        "CHIMERA_SANDBOX_WRITABLE": str(writable),
        "ANTHROPIC_BASE_URL": api_url,
        "ANTHROPIC_API_KEY": "k",
        "CHIMERA_MODEL": DEFAULT_MODEL,
    }
    async with _started([*chimera_command(), "acp"], env, folder, Clients(), Client()) as agent:
        yield agent


@contextlib.asynccontextmanager
async def _started(
    command: list[str], env: Mapping[str, str], folder: Path, clients: Clients, client: Client
) -> AsyncIterator[Agent]:
    """``command`` started with ``env``, its stderr in ``folder``, initialized by the SDK's client (offering its
    files and terminals) whose side is ``clients``; stdin closed and the process waited for afterwards."""
    stderr_path = folder / "acp-stderr.txt"
    with stderr_path.open("wb") as stderr:
        process = await asyncio.create_subprocess_exec(
            *command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr,
            env=dict(env),
            limit=50 * 1024 * 1024,
        )
    assert process.stdin is not None
    assert process.stdout is not None
    raw: list[bytes] = []
    tee = asyncio.StreamReader(limit=50 * 1024 * 1024)
    pump = asyncio.create_task(_copy(process.stdout, tee, raw))
    # Clients answers every method of the protocol's client that Chimera calls; the SDK's router finds them by name.
    conn = connect_to_agent(cast("ProtocolClient", clients), process.stdin, tee)
    try:
        offered = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        initialized = await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=offered), DEADLINE
        )
        yield Agent(conn, initialized, process, raw, stderr_path, client, clients, Path(env["CHIMERA_HOME"]))
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
