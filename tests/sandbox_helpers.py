"""Helpers for the sandbox's tests: the skip where the kernel has no Landlock, a fake home holding secrets,
a command run through the real ``bash`` tool, and one loopback TCP server shared by the whole test process."""

from __future__ import annotations

import asyncio
import functools
import socketserver
import threading
from pathlib import Path

import pytest

from chimera.core.sandbox.policy import Confinement, SandboxSettings
from chimera.core.sandbox.probe import support
from chimera.core.tools.base import ToolContext, ToolResult
from chimera.core.tools.bash import Bash

needs_landlock = pytest.mark.skipif(
    not support().available, reason=f"this kernel cannot confine commands: {support().missing}"
)
SECRET = "s3cr3t-key-material"
SERVED = "hello from the loopback server"


def fake_home(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A HOME in ``root`` holding every kind of secret (each file's text is :data:`SECRET`) and a harmless
    ``.gitconfig``; set as ``$HOME``."""
    home = root / "home"
    for name in (".ssh/id_ed25519", ".aws/credentials", ".config/gcloud/creds.json", ".gnupg/key", ".netrc"):
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).write_text(SECRET)
    (home / ".docker").mkdir()
    (home / ".docker/config.json").write_text(SECRET)
    (home / ".gitconfig").write_text("[user]\n\tname = Someone\n")
    monkeypatch.setenv("HOME", str(home))
    return home


def confined(workspace: Path, **settings: object) -> Confinement:
    """The confinement of ``workspace`` under the default settings (``$HOME`` as it is now) changed by ``settings``."""
    return SandboxSettings(**settings).confine(workspace)  # type: ignore[arg-type]


def run(command: str, workspace: Path, sandbox: Confinement | None, timeout: int = 60) -> ToolResult:
    """``command`` run by the real bash tool in ``workspace``, confined to ``sandbox`` (None: not confined)."""
    spill = workspace.parent / "spill"
    spill.mkdir(exist_ok=True)
    ctx = ToolContext(workspace, spill, sandbox=sandbox)
    return asyncio.run(Bash().run({"command": command, "timeout": timeout}, ctx))


class _Hello(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.recv(4096)
        body = SERVED.encode()
        self.request.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


@functools.cache
def loopback_port() -> int:
    """The port of a TCP server on 127.0.0.1 answering every request with :data:`SERVED` (started once)."""
    server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Hello)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port: int = server.server_address[1]
    return port
