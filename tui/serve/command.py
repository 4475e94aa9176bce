"""Provides ``serve``, the ``chimera serve`` command: check where to listen, print the address, serve until told
to stop, then end every workbench it started.

It listens on loopback unless ``--public`` is given. Either way every page and tab needs the token printed
in the address: a loopback port can be reached by every user of this machine and, through a browser, by
any web page its user opens (a page cannot read a port's answers, but it can open a websocket to one),
and a token costs nothing. The token is written once, in that one line, and nowhere else.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import ipaddress
import secrets
import signal
import socket
import sys
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.tools.paths import real_path
from chimera.core.wording import shown_path
from chimera.tui.serve.options import given_options
from chimera.tui.serve.tabs import Launch, Tabs

__all__ = ["serve"]

_SHUTDOWN = 2.0  # seconds aiohttp gives a request still being answered once every workbench has ended


def serve(args: argparse.Namespace, workbench: argparse.ArgumentParser) -> int:
    """Run ``chimera serve`` with ``args``; each tab's ``chimera`` gets the options of ``workbench`` they hold.

    Returns 128 + the number of the signal that stopped it (SIGINT: ctrl+c, SIGTERM, SIGHUP); raises
    ConfigError for an address it cannot listen on.
    """
    host = args.host.strip()
    public = _check_host(host, args.public, args.port)
    workdir = real_path(args.workdir if args.workdir is not None else Path.cwd())
    if not workdir.is_dir():
        raise ConfigError(f"--workdir {args.workdir} is not a folder: give an existing folder")
    launch = Launch(
        command=(sys.executable, "-m", "chimera.tui.launcher", *given_options(workbench, args)), cwd=Path.cwd()
    )
    return asyncio.run(_serve(host, args.port, public, launch, shown_path(workdir)))


def _check_host(host: str, public: bool, port: int) -> bool:
    """Whether ``host`` is reachable from other machines (every address it names is not loopback); raises
    ConfigError when it names none, or is not loopback and ``public`` was not given."""
    if not host:
        raise ConfigError("--host is empty: give an address of this machine, such as 127.0.0.1")
    try:
        found = socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as err:
        reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
        raise ConfigError(f"--host {host}: {reason}: give an address of this machine, such as 127.0.0.1") from None
    loopback = all(ipaddress.ip_address(str(entry[4][0]).partition("%")[0]).is_loopback for entry in found)
    if not loopback and not public:
        raise ConfigError(
            f"--host {host} can be reached from other machines: add --public to allow it (anyone who reaches "
            f"port {port} with the printed address can run commands here), or leave --host out for 127.0.0.1"
        )
    return not loopback


async def _serve(host: str, port: int, public: bool, launch: Launch, title: str) -> int:
    from aiohttp import web  # here: `chimera --help` and the other commands never import it

    from chimera.tui.serve.web import make_app

    token = secrets.token_urlsafe(32)
    tabs = Tabs(launch, _say)
    runner = web.AppRunner(make_app(token, tabs, title), access_log=None, shutdown_timeout=_SHUTDOWN)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as err:
        await runner.cleanup()
        raise ConfigError(_cannot_listen(host, port, err)) from None
    loop = asyncio.get_running_loop()
    stopped: asyncio.Future[int] = loop.create_future()

    def stop(signum: int) -> None:
        if not stopped.done():
            stopped.set_result(signum)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop, signum)
    bound = runner.addresses[0]
    if public:
        _say(
            f"warning: --public: anyone who can reach port {bound[1]} of {host} and has the address below can "
            "run commands on this machine as you; it is plain HTTP, so the token crosses the network readable: "
            "use a network you trust, or an SSH tunnel to a loopback serve instead"
        )
    sys.stdout.write(f"chimera serve: open {_address(host, bound)}/?token={token} in a browser; ctrl+c stops it\n")
    sys.stdout.flush()
    told = await stopped
    await tabs.end_all()
    await runner.cleanup()
    _say("stopped; every workbench it started has ended")
    return 128 + told


def _address(host: str, bound: tuple[object, ...]) -> str:
    """The address to type in a browser: the host as given (a name, or an address; for the wildcard, this
    machine's name), and the port bound (``--port 0`` picks one)."""
    name = host
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"http://{name}:{bound[1]}"
    if address.is_unspecified:
        name = socket.gethostname()
    elif address.version == 6:
        name = f"[{host}]"
    return f"http://{name}:{bound[1]}"


def _cannot_listen(host: str, port: int, err: OSError) -> str:
    if err.errno == errno.EADDRINUSE:
        return f"port {port} on {host} is in use: pass another --port (0 picks a free one)"
    if err.errno == errno.EADDRNOTAVAIL:
        return f"--host {host} is not an address of this machine: give one of its own, such as 127.0.0.1"
    if err.errno == errno.EACCES:
        return f"port {port} needs privileges this user lacks: pass a --port above 1023 (0 picks a free one)"
    return f"cannot listen on {host} port {port}: {err.strerror or err}: check --host and --port"


def _say(line: str) -> None:
    """One line of the server's own on stderr: nothing in it can steer the terminal, and no key shows."""
    from chimera.core.credentials import values
    from chimera.core.redact import Redactor
    from chimera.core.terminal_text import terminal_safe

    sys.stderr.write(terminal_safe(Redactor(values()).mask(f"chimera serve: {line}"), one_line=True) + "\n")
    sys.stderr.flush()
