"""Provides ``Tab``, one browser tab's workbench process, and ``Tabs``, every one a server started.

A tab's ``chimera`` runs with Textual's web driver: its stdin and stdout carry packets (a type byte ``D``
for terminal data, ``M`` for JSON meta or ``P`` for packed data, a 4-byte big-endian size, the payload),
as textual-serve's ``AppService`` speaks them; a text line on stdout (``__GANGLION__`` when an app starts,
the resume hint once it has closed) is not a packet.

Unlike ``AppService``, which starts its command through a shell with the server's environment, in the
server's process group, and on stop waits without end for an app that does not quit, a tab is started:

- under the MCP servers' keeper (``core/mcp/keeper.py``) in a session of its own, where Linux allows
  (``can_supervise``): the keeper is a subreaper, so nothing the workbench starts outlives it, and the
  kernel tells it to end everything when the server dies, even by SIGKILL;
- with the API key handed over through a pipe as ``chimera`` hands it to itself
  (``core/credentials.py``): the launcher took it out of the server's environment, and it never enters
  the tab's;
- and ended by TERM to its process group (the workbench closes as ``ctrl+q`` does; the keeper gives it a
  second, then kills all that is left), then KILL to the group if that has not ended it in ``GRACE``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from importlib import resources
from importlib.metadata import version
from pathlib import Path

from chimera.core import credentials
from chimera.core.tools.shell import can_supervise

__all__ = ["GRACE", "Launch", "Tab", "Tabs"]

GRACE = 5.0  # seconds a tab's processes have to end after TERM before its group is killed
_STARTED = b"__GANGLION__\n"  # what Textual's web driver writes when an app starts, before its packets


@dataclass(frozen=True)
class Launch:
    """How every tab's workbench starts: its command (``chimera`` and the options serve was given) and folder."""

    command: tuple[str, ...]
    cwd: Path


@dataclass(frozen=True)
class OpenUrl:
    """The workbench asks the browser to open ``url`` (http or https only)."""

    url: str
    new_tab: bool


def _packet(kind: bytes, payload: bytes) -> bytes:
    return kind + len(payload).to_bytes(4, "big") + payload


def _keeper() -> str:
    return str(resources.files("chimera.core.mcp").joinpath("keeper.py"))


class Tab:
    """One workbench process and the pipes to it; ``say`` takes each line it writes that is not the screen."""

    def __init__(self, process: asyncio.subprocess.Process, say: Callable[[str], None]) -> None:
        self.process = process
        self.pid = process.pid
        self._say = say
        self._ending: asyncio.Task[None] | None = None
        self._errors = asyncio.ensure_future(self._relay_errors())

    @classmethod
    async def start(cls, launch: Launch, width: int, height: int, say: Callable[[str], None]) -> Tab:
        """The workbench of a new tab, ``width`` by ``height`` cells, started; raises OSError if it cannot be."""
        env = credentials.clean_environment()
        env.update(
            TEXTUAL_DRIVER="textual.drivers.web_driver:WebDriver",
            TEXTUAL_FPS="60",
            TEXTUAL_COLOR_SYSTEM="truecolor",
            TERM_PROGRAM="textual",
            TERM_PROGRAM_VERSION=version("textual-serve"),
            COLUMNS=str(width),
            ROWS=str(height),
        )
        command = list(launch.command)
        if can_supervise():
            command = [sys.executable, "-I", "-S", _keeper(), *command]
        handover = _hand_over(env)
        try:
            process = await asyncio.create_subprocess_exec(
                *command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=launch.cwd,
                env=env,
                start_new_session=True,
                pass_fds=() if handover is None else (handover,),
            )
        finally:
            if handover is not None:
                os.close(handover)
        return cls(process, say)

    async def output(self) -> AsyncIterator[bytes | OpenUrl]:
        """What the workbench draws (bytes for the terminal) and asks of the browser, until its output ends."""
        out = self.process.stdout
        assert out is not None
        while True:
            try:
                kind = await out.readexactly(1)
                if kind not in (b"D", b"M", b"P"):
                    line = kind + await out.readline()
                    if line != _STARTED:
                        self._said(line)
                    continue
                size = int.from_bytes(await out.readexactly(4), "big")
                payload = await out.readexactly(size)
            except (asyncio.IncompleteReadError, ConnectionError):
                return
            except ValueError:  # a text line longer than the reader's limit: not a packet, and not said
                continue
            if kind == b"D":
                yield payload
            elif kind == b"M" and (asked := _open_url(payload)) is not None:
                yield asked

    async def keys(self, text: str) -> None:
        """What the person typed (as the terminal encodes it) to the workbench."""
        await self._send(_packet(b"D", text.encode("utf-8", "surrogateescape")))

    async def meta(self, **fields: object) -> None:
        """A meta packet to the workbench: ``type="resize", width=…, height=…``, ``type="focus"``…"""
        await self._send(_packet(b"M", json.dumps(fields).encode()))

    async def _send(self, data: bytes) -> None:
        stdin = self.process.stdin
        if stdin is None or stdin.is_closing():
            return
        with contextlib.suppress(ConnectionError, RuntimeError):  # it has ended: its output ends too
            stdin.write(data)
            await stdin.drain()

    async def end(self) -> None:
        """End the workbench and all it started, and wait until they have ended (once, however often asked)."""
        if self._ending is None:
            self._ending = asyncio.ensure_future(self._end())
        await asyncio.shield(self._ending)

    async def _end(self) -> None:
        if self.process.returncode is None:
            _signal_group(self.pid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), GRACE)
        _signal_group(self.pid, signal.SIGKILL)  # whatever of its group is left (nothing, under a keeper)
        await self.process.wait()
        await self._errors

    async def _relay_errors(self) -> None:
        err = self.process.stderr
        assert err is not None
        with contextlib.suppress(ConnectionError, ValueError):
            async for line in err:
                self._said(line)

    def _said(self, line: bytes) -> None:
        self._say(f"workbench {self.pid}: " + line.decode("utf-8", "replace").rstrip("\n"))


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _hand_over(env: dict[str, str]) -> int | None:
    """The read end of a pipe holding this process's credentials, named in ``env``; None when there are none."""
    held = {name: value for name in credentials.SECRET_VARS if (value := credentials.get(name))}
    if not held:
        return None
    read, write = os.pipe()
    try:
        os.write(write, json.dumps(held).encode())  # a few hundred bytes: a pipe holds 64 KiB unread
    finally:
        os.close(write)
    env[credentials.HANDOVER_VAR] = str(read)
    return read


def _open_url(payload: bytes) -> OpenUrl | None:
    """An ``open_url`` meta packet's request, if it asks for a web page (a ``javascript:`` URL would run in the
    page that holds the token); None for anything else."""
    try:
        meta = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(meta, dict) or meta.get("type") != "open_url":
        return None
    url = meta.get("url")
    if not isinstance(url, str) or not url.lower().startswith(("http://", "https://")):
        return None
    return OpenUrl(url, bool(meta.get("new_tab", True)))


class Tabs:
    """The tabs a server has open; once ``end_all`` has begun, no new one starts."""

    def __init__(self, launch: Launch, say: Callable[[str], None]) -> None:
        self.launch = launch
        self._say = say
        self._open: set[Tab] = set()
        self.closing = False

    def __len__(self) -> int:
        return len(self._open)

    async def open(self, width: int, height: int) -> Tab | None:
        """A new tab's workbench, started; None once the server is stopping."""
        if self.closing:
            return None
        tab = await Tab.start(self.launch, width, height, self._say)
        self._open.add(tab)
        self._say(f"workbench {tab.pid} started")
        return tab

    async def close(self, tab: Tab) -> None:
        """End ``tab``'s workbench (the browser left, or it quit)."""
        await tab.end()
        if tab in self._open:
            self._open.discard(tab)
            self._say(f"workbench {tab.pid} ended")

    async def end_all(self) -> None:
        """End every tab's workbench at once and wait for them all."""
        self.closing = True
        await asyncio.gather(*(self.close(tab) for tab in list(self._open)))
