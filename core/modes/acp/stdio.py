"""Provides ``serve_stdio``: the ``chimera acp`` process, the protocol on its stdin and stdout.

Only the protocol reaches stdout. Before anything else runs, the protocol takes descriptors of its own for
stdin and stdout, and descriptor 1 then writes to stderr (descriptor 0 reads nothing): a stray print, a
warning, or a program a tool starts can never put a byte into the stream the client reads, nor take one
from it. Logs go to ``CHIMERA_HOME/logs/acp.log`` (rotated at a megabyte), credentials masked. The process
ends when the client closes stdin, or on SIGTERM or SIGINT: every run is stopped and every session closed
first.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
from logging.handlers import RotatingFileHandler
from pathlib import Path
from typing import cast

from chimera.core.home import chimera_home, private_dir
from chimera.core.sessions.opening import RunOptions
from chimera.core.threads import use_daemon_threads

__all__ = ["LOG_NAME", "protocol_streams", "serve_stdio"]

LOG_NAME = "acp.log"
_LINE_LIMIT = 50 * 1024 * 1024  # bytes one JSON-RPC line may take (a prompt with images): the SDK's own default


def serve_stdio(options: RunOptions, version: str) -> int:
    """Be an ACP agent on stdin and stdout with ``options`` for every session; the exit code (0)."""
    log_file = _log_to_file()
    streams = protocol_streams()
    logging.getLogger("chimera.acp").info("chimera acp %s started (pid %d)", version, os.getpid())
    try:
        return asyncio.run(_serve(options, version, *streams))
    finally:
        logging.getLogger("chimera.acp").info("chimera acp ended; the log is %s", log_file)


def protocol_streams() -> tuple[int, int]:
    """New descriptors for the protocol's input and output; 0 then reads /dev/null and 1 writes to stderr."""
    sys.stdout.flush()
    given_in, given_out = os.dup(0), os.dup(1)
    nothing = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(nothing, 0)
    finally:
        os.close(nothing)
    os.dup2(2, 1)
    return given_in, given_out


class _Masked(logging.Formatter):
    """Log lines with every credential the process holds masked."""

    def format(self, record: logging.LogRecord) -> str:
        from chimera.core.credentials import values
        from chimera.core.redact import Redactor

        return Redactor(values()).mask(super().format(record))


def _log_to_file() -> Path:
    """Send the process's log (Chimera's at INFO, everything's at WARNING, Python's warnings) to the log file."""
    path = private_dir(chimera_home() / "logs") / LOG_NAME
    handler = RotatingFileHandler(path, maxBytes=1 << 20, backupCount=2, encoding="utf-8")
    handler.setFormatter(_Masked("%(asctime)s %(process)d %(name)s %(levelname)s %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("chimera").setLevel(logging.INFO)
    logging.captureWarnings(True)
    return path


async def _serve(options: RunOptions, version: str, given_in: int, given_out: int) -> int:
    from acp.agent.connection import AgentSideConnection
    from acp.interfaces import Agent

    from chimera.core.modes.acp.agent import ChimeraAgent

    use_daemon_threads(asyncio.get_running_loop())  # work left on a thread (the SDK's import) never holds the exit
    reader, writer = await _streams(given_in, given_out)
    agent = ChimeraAgent(options, version)
    # The methods ChimeraAgent leaves out (session/list, authenticate, …) the SDK's router answers "method not found".
    connection = AgentSideConnection(cast("Agent", agent), writer, reader, listening=False)
    main = asyncio.current_task()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        if main is not None:
            loop.add_signal_handler(number, main.cancel)
    try:
        await connection.listen()  # until the client closes stdin
    except asyncio.CancelledError:
        if main is not None:
            main.uncancel()
    finally:
        for number in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(number)
        await agent.close()
        await connection.close()
    return 0


async def _streams(given_in: int, given_out: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """The protocol's input and output as asyncio streams, over the descriptors given."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(given_in, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(given_out, "wb", 0))
    return reader, asyncio.StreamWriter(transport, protocol, reader, loop)
