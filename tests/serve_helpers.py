"""Driving the real ``chimera serve``: started on 127.0.0.1 at a free port, the address it printed, what it said,
the processes under it, and a browser tab's websocket (aiohttp's client) read as the text it draws."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import subprocess
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.cli_runner import chimera_command

__all__ = ["WELCOME", "Drawn", "Served", "alive", "command_line", "escapes_out", "serving", "tab"]

WELCOME = "Welcome to Chimera"  # the first words of a new workbench's first frame
_ESCAPES = re.compile(rb"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][0-9A-Za-z]|\x1b[=>78]")
_MOVE = re.compile(rb"\x1b\[[0-9;]*H")


class Served:
    """A running ``chimera serve``: the page's address (with the token), and every line it wrote."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process
        self.out: list[str] = []
        self.err: list[str] = []
        self._printed = threading.Event()
        self._readers = [
            threading.Thread(target=self._read, args=(process.stdout, self.out), daemon=True),
            threading.Thread(target=self._read, args=(process.stderr, self.err), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        if not self._printed.wait(60) or not self.out:
            pytest.fail(f"chimera serve printed no address; it said: {self.said()!r}")
        found = re.search(r"(http://\S+)/\?token=(\S+)", self.out[0])
        assert found, self.out[0]
        self.base, self.token = found[1], found[2]
        self.address = f"{self.base}/?token={self.token}"

    def _read(self, stream: object, into: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            into.append(line.decode("utf-8", "replace"))
            if into is self.out:
                self._printed.set()
        self._printed.set()  # its output ended (it stopped before printing an address)

    def websocket(self, token: str | None = None, width: int = 100, height: int = 30) -> str:
        return f"{self.base.replace('http', 'ws', 1)}/ws/{token or self.token}?width={width}&height={height}"

    def stop(self, signum: int = signal.SIGTERM) -> int:
        """Send ``signum`` and wait for it to end; its exit code (its output read to the end)."""
        self.process.send_signal(signum)
        code = self.process.wait(60)
        self.finish()
        return code

    def finish(self) -> None:
        """Read its output to the end (it has exited) and close the pipes."""
        for reader in self._readers:
            reader.join(10)
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()

    def said(self) -> str:
        return "".join(self.out) + "".join(self.err)

    def below(self) -> list[int]:
        """Every live process under this serve (its workbenches, their keepers and what they started)."""
        children: dict[int, list[int]] = {}
        for name in os.listdir("/proc"):
            if name.isdigit():
                with contextlib.suppress(OSError):
                    stat = Path(f"/proc/{name}/stat").read_bytes()
                    children.setdefault(int(stat[stat.rindex(b")") + 2 :].split()[1]), []).append(int(name))
        found, todo = [], [self.process.pid]
        while todo:
            below = children.get(todo.pop(), [])
            found += below
            todo += below
        return [pid for pid in found if alive(pid)]


def escapes_out(drawn: bytes) -> str:
    """What a terminal stream draws, as text: escape sequences taken out, each cursor move a new line."""
    return _ESCAPES.sub(b"", _MOVE.sub(b"\n", drawn)).decode("utf-8", "replace")


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended: only its parent has not read how)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] != b"Z"


def command_line(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode("utf-8", "replace")
    return ""


@contextlib.contextmanager
def serving(workdir: Path, *options: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``chimera serve --port 0 OPTIONS`` in ``workdir`` (this environment plus ``env``); stopped afterwards."""
    process = subprocess.Popen(
        [*chimera_command(), "serve", "--port", "0", *options],
        cwd=workdir,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    served = None
    try:
        served = Served(process)
        yield served
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if served is not None:
            served.finish()
        else:
            for stream in (process.stdout, process.stderr):
                if stream is not None:
                    stream.close()


class Drawn:
    """What a tab's websocket has drawn so far, as text: escape sequences out, each cursor move a new line."""

    def __init__(self, socket: aiohttp.ClientWebSocketResponse) -> None:
        self.socket = socket
        self.data = b""

    def feed(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.data += payload

    def text(self) -> str:
        return escapes_out(self.data)

    async def until(self, words: str, timeout: float = 60) -> None:
        """Read frames until ``words`` have been drawn (fails after ``timeout`` seconds, or if the tab closes)."""
        async with asyncio.timeout(timeout):
            while words not in self.text():
                message = await self.socket.receive()
                if message.type == aiohttp.WSMsgType.BINARY:
                    self.feed(message.data)
                elif message.type != aiohttp.WSMsgType.TEXT:
                    pytest.fail(f"the tab closed before {words!r} was drawn; it drew: {self.text()[-2000:]!r}")

    async def type(self, text: str) -> None:
        await self.socket.send_json(["stdin", text])

    async def closed(self, timeout: float = 60) -> None:
        """Read frames until the server closes the tab."""
        async with asyncio.timeout(timeout):
            while not self.socket.closed:
                message = await self.socket.receive()
                if message.type in (aiohttp.WSMsgType.CLOSE, aiohttp.WSMsgType.CLOSED, aiohttp.WSMsgType.CLOSING):
                    return


@contextlib.asynccontextmanager
async def tab(served: Served) -> AsyncIterator[Drawn]:
    """A browser tab's websocket to ``served``, its workbench's welcome drawn."""
    async with aiohttp.ClientSession() as client, client.ws_connect(served.websocket()) as socket:
        drawn = Drawn(socket)
        await drawn.until(WELCOME)
        yield drawn
