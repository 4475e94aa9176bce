"""Provides ``ChimeraAgent``: the methods of the Agent Client Protocol (v1) that ``chimera acp`` answers.

``initialize`` says what Chimera takes: ``session/load``, prompts of text, embedded context and images,
MCP servers over stdio and Streamable HTTP (not SSE), no authentication (the model's key comes from the
environment, as for every ``chimera`` command), and its name and version. ``session/new`` opens a Chimera
session in the client's ``cwd`` with the options ``chimera acp`` was started with and the client's MCP
servers; its modes are the permission modes. ``session/load`` opens a session this ``CHIMERA_HOME`` keeps,
tells its active branch, then answers. ``session/set_mode``, ``session/prompt`` and ``session/cancel`` go to
the session (``live.LiveSession``). Input Chimera cannot take is a JSON-RPC error whose message is one line
naming the cause and the fix.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
from collections.abc import Coroutine, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_current_mode
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
)

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.home import chimera_home
from chimera.core.modes.acp.endings import BAD_INPUT, NO_SESSION
from chimera.core.modes.acp.prompts import Block, prompt_of
from chimera.core.modes.acp.servers import Entry, client_servers, merged
from chimera.core.option_names import MODES
from chimera.core.providers.choice import model_configured
from chimera.core.sessions.opening import RunOptions, opening

if TYPE_CHECKING:  # the session's machinery loads after initialize is answered (``_warm_up``)
    from chimera.core.modes.acp.live import LiveSession

__all__ = ["ChimeraAgent", "modes"]

NO_MODEL = (
    "no model is configured: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a server that speaks the Messages "
    "API) in the environment chimera acp starts in"
)

_MODES = {
    "ask": ("Ask", "Ask before each edit and each command"),
    "accept-edits": ("Accept edits", "Edit files without asking; ask before commands"),
    "plan": ("Plan", "Read and plan only: no edit, no command"),
    "bypass": ("Bypass", "Run every call without asking (deny rules and the sandbox still hold)"),
}


def modes(current: str) -> SessionModeState:
    """The permission modes, ``current`` the one in force."""
    return SessionModeState(
        current_mode_id=current,
        available_modes=[SessionMode(id=mode, name=_MODES[mode][0], description=_MODES[mode][1]) for mode in MODES],
    )


class ChimeraAgent:
    """The sessions of one client, opened with ``options`` (``chimera acp``'s); ``version``: Chimera's."""

    def __init__(self, options: RunOptions, version: str) -> None:
        self.options = options
        self.version = version
        self.client: Client | None = None
        self.sessions: dict[str, LiveSession] = {}
        self._later: set[asyncio.Task[None]] = set()

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self._after(_warm_up())
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, audio=False, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=False),
            ),
            auth_methods=[],
            agent_info=Implementation(name="chimera", title="Chimera", version=self.version),
        )

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[Entry] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        live = await self._open(replace(self.options, workdir=self._folder(cwd), resume=None), mcp_servers or ())
        self._after(live.announce())
        return NewSessionResponse(session_id=live.id, modes=modes(live.session.policy.mode))

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[Entry] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        live = self.sessions.get(session_id)
        if live is None:
            if not model_configured():
                raise RequestError(BAD_INPUT, NO_MODEL)
            recorded = await asyncio.to_thread(self._recorded_folder, session_id)
            # The session works on in its own folder; the client's cwd stands in only for one no longer there.
            workdir = None if recorded.is_dir() else self._folder(cwd)
            options = replace(self.options, workdir=workdir, resume=session_id)
            live = await self._open(options, mcp_servers or ())
            self.sessions.setdefault(session_id, live)  # the id as the client gave it (a beginning is enough)
        await live.replay()
        self._after(live.announce())
        return LoadSessionResponse(modes=modes(live.session.policy.mode))

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        live = self._live(session_id)
        try:
            live.session.configure(mode=mode_id)
        except ConfigError as err:
            raise RequestError(BAD_INPUT, str(err)) from None
        self._after(live.send(update_current_mode(mode_id)))
        return SetSessionModeResponse()

    async def prompt(self, session_id: str, prompt: list[Block], **kwargs: Any) -> PromptResponse:
        live = self._live(session_id)
        try:
            content = prompt_of(prompt)
        except ConfigError as err:
            raise RequestError(BAD_INPUT, str(err)) from None
        return PromptResponse(stop_reason=await live.prompt(content))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        live = self.sessions.get(session_id)
        if live is not None:
            live.cancel()

    async def close(self) -> None:
        """Stop every run and close every session (the client went away)."""
        for task in list(self._later):
            task.cancel()
        for live in {id(live): live for live in self.sessions.values()}.values():
            with contextlib.suppress(Exception):
                await live.close()
        self.sessions.clear()

    # --- helpers --------------------------------------------------------------------------------

    def _folder(self, cwd: str) -> Path:
        folder = Path(cwd)
        if not folder.is_absolute():
            raise RequestError(BAD_INPUT, f"the cwd {cwd!r} is not an absolute path: give the folder's whole path")
        if not folder.is_dir():
            what = "is not a folder" if folder.exists() else "does not exist"
            raise RequestError(BAD_INPUT, f"the cwd {cwd} {what}: give the folder the session works in")
        return folder

    def _recorded_folder(self, session_id: str) -> Path:
        """The folder the session ``session_id`` works in; RequestError (resource not found) unless it names one
        session of this CHIMERA_HOME, and one line saying why for a session that cannot be read."""
        from chimera.core.sessions.session_ids import resolve_session
        from chimera.core.sessions.store import SessionStore, sessions_dir

        home = chimera_home()
        try:
            resolve_session(sessions_dir(home), session_id)
        except ConfigError:
            raise RequestError(
                NO_SESSION,
                f"there is no session {session_id!r} in {home}: load an id that session/new gave "
                "(`chimera sessions` lists them)",
            ) from None
        try:
            with SessionStore.open(home, session_id, writable=False) as store:
                return store.workdir
        except ChimeraError as err:
            raise RequestError(BAD_INPUT, str(err)) from None

    async def _open(self, options: RunOptions, entries: Sequence[Entry]) -> LiveSession:
        if self.client is None:
            raise RuntimeError("the agent is not connected to a client")
        try:
            start = opening(options)  # bad options are one line before anything opens
            if start.demo:
                raise ConfigError(NO_MODEL)
            start = replace(start, mcp_servers=merged(start.mcp_servers, client_servers(entries)))
            from chimera.core.sessions.start import open_session  # the session's machinery, once a session opens

            session = await open_session(start)
        except ChimeraError as err:
            raise RequestError(BAD_INPUT, str(err)) from None
        from chimera.core.modes.acp.live import LiveSession

        live = LiveSession(session, self.client)
        self.sessions[live.id] = live
        return live

    def _live(self, session_id: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise RequestError(
                NO_SESSION, f"there is no open session {session_id!r}: open it with session/new or session/load"
            )
        return live

    def _after(self, work: Coroutine[Any, Any, None]) -> None:
        """Do ``work`` once the answer being made is sent (the connection sends it before a new task runs)."""
        task = asyncio.create_task(work)
        self._later.add(task)
        task.add_done_callback(self._later.discard)


async def _warm_up() -> None:
    """Import what a session needs (the live session's machinery, then the model's SDK: about two seconds of
    imports) on a thread while the client gets ready to open one, so neither initialize nor the first prompt
    waits for it."""
    for module in ("chimera.core.modes.acp.live", "chimera.core.sessions.start", "anthropic"):
        await asyncio.to_thread(importlib.import_module, module)
