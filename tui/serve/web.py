"""Provides ``make_app``: the aiohttp application of ``chimera serve``.

Three routes, composed here around textual-serve's browser side rather than through its ``Server``
(which has no way to ask for a token, logs every request's address, fetches its font from Google, and
leaves its apps running when it stops):

- ``/?token=TOKEN``: the page (``page.html``), titled with the workspace, whose terminal connects to
- ``/ws/TOKEN``: one tab; its own workbench process starts when it connects and ends when it leaves
  (the token is in the path because textual.js adds the terminal's size as the query);
- ``/static/…``: textual-serve's script (xterm.js and Textual's protocol), styles and fonts, which hold
  nothing of this machine's.

A request without the right token is answered 403 before anything starts. Tokens are compared in
constant time. Nothing here logs a request (aiohttp's access log is off: it would write the token).
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import html
import json
from importlib import resources
from pathlib import Path
from string import Template

from aiohttp import WSMsgType, web

from chimera.tui.serve.tabs import OpenUrl, Tab, Tabs

__all__ = ["make_app"]

_TOKEN = web.AppKey("token", str)
_TABS = web.AppKey("tabs", Tabs)
_TITLE = web.AppKey("title", str)
_PAGE = Template(resources.files("chimera.tui.serve").joinpath("page.html").read_text(encoding="utf-8"))
_STATIC = Path(str(resources.files("textual_serve").joinpath("static")))
_REFUSED = (
    "This Chimera asks for its token: open the address `chimera serve` printed when it started "
    "(it ends in ?token=...).\n"
)
_HEADERS = {
    "Cache-Control": "no-store",  # the page holds the token
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "frame-ancestors 'none'",
}
_CELLS = range(1, 1001)  # a terminal's width or height, in cells, that a browser may ask for


def make_app(token: str, tabs: Tabs, title: str) -> web.Application:
    """The server's application: ``token`` guards the page and every tab; ``title`` names the browser's tab."""
    app = web.Application()
    app[_TOKEN], app[_TABS], app[_TITLE] = token, tabs, title
    app.add_routes(
        [
            web.get("/", _page),
            web.get("/ws/{token}", _tab),
            web.static("/static", _STATIC, follow_symlinks=False),
        ]
    )
    return app


def _allowed(request: web.Request, given: str) -> None:
    """Raise 403 unless ``given`` is the server's token (compared in constant time)."""
    if not hmac.compare_digest(given.encode("utf-8", "surrogateescape"), request.app[_TOKEN].encode()):
        raise web.HTTPForbidden(text=_REFUSED, headers=_HEADERS)


async def _page(request: web.Request) -> web.Response:
    _allowed(request, request.query.get("token", ""))
    scheme = "wss" if request.secure else "ws"
    body = _PAGE.substitute(
        title=html.escape(request.app[_TITLE]),
        websocket=html.escape(f"{scheme}://{request.host}/ws/{request.app[_TOKEN]}"),
    )
    return web.Response(text=body, content_type="text/html", headers=_HEADERS)


def _cells(value: str | None, default: int) -> int:
    try:
        number = int(value or default)
    except ValueError:
        return default
    return number if number in _CELLS else default


async def _tab(request: web.Request) -> web.WebSocketResponse:
    """One browser tab: a workbench of its own while the websocket lasts."""
    _allowed(request, request.match_info["token"])
    tabs = request.app[_TABS]
    socket = web.WebSocketResponse(heartbeat=15)  # a browser gone without a word is noticed within 30 s
    await socket.prepare(request)
    try:
        tab = await tabs.open(_cells(request.query.get("width"), 80), _cells(request.query.get("height"), 24))
    except OSError as err:
        await socket.close(message=f"the workbench could not start: {err.strerror or err}".encode()[:120])
        return socket
    if tab is None:  # the server is stopping
        await socket.close(code=1001)
        return socket
    drawing = asyncio.ensure_future(_draw(tab, socket))
    try:
        async for message in socket:
            if message.type == WSMsgType.TEXT:
                await _from_browser(tab, socket, message.data)
    finally:
        await tabs.close(tab)
        await drawing
    return socket


async def _draw(tab: Tab, socket: web.WebSocketResponse) -> None:
    """The workbench's output to the browser until it ends; then the websocket closes (the page says so)."""
    with contextlib.suppress(ConnectionError, RuntimeError):  # the browser has gone
        async for item in tab.output():
            if isinstance(item, OpenUrl):
                await socket.send_json(["open_url", {"url": item.url, "new_tab": item.new_tab}])
            else:
                await socket.send_bytes(item)
    await socket.close()


async def _from_browser(tab: Tab, socket: web.WebSocketResponse, data: str) -> None:
    """One message of textual.js: ``["stdin", text]``, ``["resize", {width, height}]``, ``["ping", t]``,
    ``["focus"]`` or ``["blur"]``; anything else is ignored."""
    try:
        envelope = json.loads(data)
    except ValueError:
        return
    if not isinstance(envelope, list) or not envelope:
        return
    kind, value = envelope[0], envelope[1] if len(envelope) > 1 else None
    if kind == "stdin" and isinstance(value, str):
        await tab.keys(value)
    elif kind == "resize" and isinstance(value, dict):
        width, height = _cells(str(value.get("width")), 0), _cells(str(value.get("height")), 0)
        if width and height:
            await tab.meta(type="resize", width=width, height=height)
    elif kind in ("focus", "blur"):
        await tab.meta(type=kind)
    elif kind == "ping" and isinstance(value, str):
        await socket.send_json(["pong", value])
