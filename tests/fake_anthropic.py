"""A loopback server that speaks the Anthropic Messages API, for driving the real SDK in tests.

``FakeAnthropic`` listens on 127.0.0.1 (a free port), answers ``POST /v1/messages``
from a script (one scripted reply per request, in order) and records every
request it receives, so that tests can assert exactly what the client sent.

Replies are built with the helpers below:

* :func:`message` - a whole streamed assistant message (``message_start``, a
  ``ping``, ``content_block_start``/``delta``/``stop`` for each block,
  ``message_delta`` with the stop reason and usage, ``message_stop``);
* :func:`status` - an HTTP error status with the API's JSON error body;
* :func:`stream_error` - an SSE ``event: error`` after some deltas, on a 200 stream;
* :func:`dropped` - a stream whose connection closes before ``message_stop``;
* :func:`stalled` - a stream that sends its first events (or, ``silent``, not even
  the status line), then nothing until released (a ``threading.Event``) or the
  server stops;
* :func:`corrupt` - a 200 stream with an event whose data is not JSON;
* :func:`page` - a body that is not the Messages API at all (an HTML page, plain
  text, some other JSON), with any status and content type.

Streams use chunked transfer encoding, as the API does over HTTP/1.1, unless
``framing="close"`` asks for a body that ends when the connection closes. Every
reply carries ``Connection: close``, so no connection outlives its request and
the server can stop promptly. Only the standard library is used.

One server can hold many scripted models (:meth:`FakeAnthropic.routed`): each
takes the requests its test's ``matches`` picks out, records them and answers
them from its own script, so tests that share a client process (one agent
serving many sessions) never see each other's requests.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import socket
import sys
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

__all__ = [
    "Block",
    "FakeAnthropic",
    "Received",
    "Reply",
    "by_model",
    "corrupt",
    "dropped",
    "message",
    "paced",
    "page",
    "paused",
    "redacted_thinking",
    "stalled",
    "status",
    "stream_error",
    "text",
    "thinking",
    "tool_use",
]

DEFAULT_MODEL = "claude-sonnet-4-6"
_ids = itertools.count(1)

Framing = Literal["chunked", "close"]


# --- content blocks ---------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """One content block of a scripted message, and how it is streamed."""

    kind: str
    start: dict[str, Any]
    deltas: list[dict[str, Any]]


def _split(value: str, pieces: int) -> list[str]:
    """``value`` cut in up to ``pieces`` non-empty parts that join back to it."""
    if not value:
        return []
    pieces = max(1, min(pieces, len(value)))
    size, extra = divmod(len(value), pieces)
    out, at = [], 0
    for i in range(pieces):
        end = at + size + (1 if i < extra else 0)
        out.append(value[at:end])
        at = end
    return out


def text(value: str, *, pieces: int = 3) -> Block:
    """A text block streamed as ``pieces`` text deltas."""
    deltas = [{"type": "text_delta", "text": part} for part in _split(value, pieces)]
    return Block("text", {"type": "text", "text": ""}, deltas)


def thinking(value: str, signature: str, *, pieces: int = 2) -> Block:
    """A thinking block: thinking deltas, then one signature delta."""
    deltas: list[dict[str, Any]] = [{"type": "thinking_delta", "thinking": p} for p in _split(value, pieces)]
    deltas.append({"type": "signature_delta", "signature": signature})
    return Block("thinking", {"type": "thinking", "thinking": "", "signature": ""}, deltas)


def redacted_thinking(data: str) -> Block:
    """A redacted thinking block: its data comes whole in ``content_block_start``."""
    return Block("redacted_thinking", {"type": "redacted_thinking", "data": data}, [])


def tool_use(
    call_id: str,
    name: str,
    input: dict[str, Any] | None = None,
    *,
    raw_json: str | None = None,
    pieces: int = 3,
) -> Block:
    """A tool call whose input JSON arrives in ``pieces`` input_json_delta parts.

    ``raw_json`` sends that text instead of ``input`` serialised, e.g. invalid JSON.
    """
    payload = raw_json if raw_json is not None else json.dumps(input or {})
    deltas = [{"type": "input_json_delta", "partial_json": p} for p in _split(payload, pieces)]
    return Block("tool_use", {"type": "tool_use", "id": call_id, "name": name, "input": {}}, deltas)


# --- replies ------------------------------------------------------------------------

Event = tuple[str, dict[str, Any] | str]
"""An SSE event: its name and its data, a JSON object or raw text sent as it is."""


@dataclass
class Reply:
    """One scripted answer to one request.

    A streamed reply has ``events``; ``ending`` says how the body ends: ``complete``
    (the last chunk is sent), ``drop`` (the connection closes mid-body) or ``stall``
    (nothing more until ``release`` is set or the server stops). A plain reply has a
    JSON ``body`` and a ``status``; a ``raw`` reply sends those bytes as they are, as
    ``content_type``.
    """

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: dict[str, Any] | None = None
    events: list[Event] = field(default_factory=list)
    ending: Literal["complete", "drop", "stall"] = "complete"
    framing: Framing = "chunked"
    release: threading.Event | None = None
    stream: bool = True
    silent: bool = False  # stall before sending even the status line
    raw: bytes | None = None
    content_type: str = "application/json"
    pause_at: int | None = None  # send this many events, wait for ``release``, then the rest
    paused: threading.Event | None = None  # set when the pause begins
    pace: float = 0.0  # seconds between events: a model that streams at its own speed
    begun: threading.Event | None = None  # set as the first event is sent
    sent: threading.Event | None = None  # set once the last event is sent


def _message_start(model: str, input_tokens: int, cache_read: int, cache_write: int) -> Event:
    return (
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": f"msg_fake{next(_ids):04d}",
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": {
                    "input_tokens": input_tokens,
                    "output_tokens": 1,
                    "cache_creation_input_tokens": cache_write,
                    "cache_read_input_tokens": cache_read,
                },
            },
        },
    )


def _block_events(blocks: tuple[Block, ...], *, close_last: bool = True) -> list[Event]:
    """Start, deltas and stop of every block, with one ``ping`` after the first start."""
    events: list[Event] = []
    for index, block in enumerate(blocks):
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block.start},
            )
        )
        if index == 0:
            events.append(("ping", {"type": "ping"}))
        events += [
            ("content_block_delta", {"type": "content_block_delta", "index": index, "delta": d}) for d in block.deltas
        ]
        if close_last or index < len(blocks) - 1:
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    return events


def message(
    *blocks: Block,
    stop_reason: str = "end_turn",
    input_tokens: int = 120,
    output_tokens: int = 30,
    cache_read: int = 0,
    cache_write: int = 0,
    model: str = DEFAULT_MODEL,
    framing: Framing = "chunked",
) -> Reply:
    """A complete streamed assistant message made of ``blocks``."""
    events = [_message_start(model, input_tokens, cache_read, cache_write), *_block_events(blocks)]
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": output_tokens},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return Reply(events=events, framing=framing)


def _opening(blocks: tuple[Block, ...], model: str) -> list[Event]:
    """``message_start`` and the blocks so far, the last one left open (as if cut mid-block)."""
    return [_message_start(model, 120, 0, 0), *_block_events(blocks, close_last=False)]


def status(
    code: int,
    error_type: str,
    error_message: str,
    *,
    headers: dict[str, str] | None = None,
) -> Reply:
    """An HTTP error status with the API's JSON error body."""
    body = {"type": "error", "error": {"type": error_type, "message": error_message}}
    return Reply(status=code, headers=dict(headers or {}), body=body, stream=False)


def page(body: str, *, code: int = 200, content_type: str = "text/html; charset=utf-8") -> Reply:
    """A response that is not the Messages API: ``body`` as it is, with status ``code`` and ``content_type``."""
    return Reply(status=code, raw=body.encode(), content_type=content_type, stream=False)


def stream_error(
    *blocks: Block,
    error_type: str = "overloaded_error",
    error_message: str = "Overloaded",
    model: str = DEFAULT_MODEL,
) -> Reply:
    """A 200 stream that sends ``blocks`` so far, then an ``event: error`` and ends."""
    events = _opening(blocks, model)
    events.append(("error", {"type": "error", "error": {"type": error_type, "message": error_message}}))
    return Reply(events=events)


def dropped(*blocks: Block, framing: Framing = "chunked", model: str = DEFAULT_MODEL) -> Reply:
    """A stream whose connection closes after ``blocks`` so far, before ``message_stop``."""
    return Reply(events=_opening(blocks, model), ending="drop", framing=framing)


def stalled(
    *blocks: Block,
    release: threading.Event | None = None,
    silent: bool = False,
    model: str = DEFAULT_MODEL,
) -> Reply:
    """A stream that sends ``message_start`` (and ``blocks``), then nothing until released or stopped.

    ``silent`` stalls before the response starts: the request is read, no byte comes back.
    """
    return Reply(events=_opening(blocks, model), ending="stall", release=release or threading.Event(), silent=silent)


def paced(reply: Reply, seconds: float, begun: threading.Event, sent: threading.Event) -> Reply:
    """``reply`` with ``seconds`` between its events, as a model streams; ``begun`` is set as its first
    event is sent and ``sent`` once its last is."""
    return dataclasses.replace(reply, pace=seconds, begun=begun, sent=sent)


def paused(reply: Reply, release: threading.Event, reached: threading.Event, *, after: int = 4) -> Reply:
    """``reply`` sent in two parts: its first ``after`` events, then (``reached`` is set) nothing until
    ``release`` is set, then the rest: a response still streaming while the test acts."""
    return dataclasses.replace(reply, pause_at=after, release=release, paused=reached)


def corrupt(
    *blocks: Block,
    garbage: str = '{"type": "content_block_delta", "index": 0, "delta": {',
    model: str = DEFAULT_MODEL,
) -> Reply:
    """A 200 stream that sends ``blocks`` so far, then an event whose data is not JSON, then ends."""
    events = _opening(blocks, model)
    events.append(("content_block_delta", garbage))
    return Reply(events=events)


def by_model(scripts: dict[str, list[Reply]]) -> Callable[[Any], Reply]:
    """A ``responder`` answering each request from the script of the model it names, in order: variants
    running side by side each get their own replies, whichever asks first. A model with none left gets a 400."""
    queues = {model: deque(replies) for model, replies in scripts.items()}

    def respond(body: Any) -> Reply:
        model = body.get("model") if isinstance(body, dict) else None
        queue = queues.get(str(model))
        try:
            return queue.popleft() if queue is not None else _no_reply(f"no script for model {model!r}")
        except IndexError:
            return _no_reply(f"the script of model {model!r} has no reply left")

    return respond


def _no_reply(why: str) -> Reply:
    return status(400, "invalid_request_error", f"fake server: {why}")


# --- the server ---------------------------------------------------------------------


@dataclass(frozen=True)
class Received:
    """One request as the server saw it."""

    method: str
    path: str
    headers: dict[str, str]
    raw: bytes
    body: Any

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", []))


def conversation_problem(body: Any) -> str | None:
    """Why the real API would reject these messages (a tool call left unanswered), or None."""
    if not isinstance(body, dict):
        return None
    messages = body.get("messages") or []
    for index, message in enumerate(messages):
        content = message.get("content")
        if message.get("role") != "assistant" or not isinstance(content, list):
            continue
        calls = [b["id"] for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if not calls:
            continue
        following = messages[index + 1] if index + 1 < len(messages) else None
        answered = set()
        if following is not None and isinstance(following.get("content"), list):
            answered = {b.get("tool_use_id") for b in following["content"] if b.get("type") == "tool_result"}
        missing = [c for c in calls if c not in answered]
        if missing and following is not None:
            return f"messages.{index + 1}: tool_use ids were found without tool_result blocks: {missing}"
    return None


def _sse(name: str, payload: dict[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, separators=(",", ":"))
    return f"event: {name}\ndata: {data}\n\n".encode()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "fake-anthropic/1"
    timeout = 10  # a client that opens a connection and sends nothing cannot hold up shutdown
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        fake = self.server.fake.model_for(body)
        fake._record(
            Received(
                method="POST",
                path=self.path,
                headers={k.lower(): v for k, v in self.headers.items()},
                raw=raw,
                body=body,
            )
        )
        problem = conversation_problem(body)
        if self.path.split("?")[0] != "/v1/messages":
            reply = status(404, "not_found_error", f"fake server: no route {self.path}")
        elif problem is not None:  # what the real API refuses, refused here too
            reply = status(400, "invalid_request_error", problem)
        else:
            reply = fake._next_reply(body)
        try:
            self._write(reply, fake)
        except OSError:  # the client went away first: what a real server would shrug off too
            self.close_connection = True

    def do_GET(self) -> None:
        self._write(status(405, "invalid_request_error", "fake server: only POST /v1/messages"), self.server.fake)

    def _write(self, reply: Reply, fake: FakeAnthropic) -> None:
        """Send ``reply``, stalling and pacing as the model ``fake`` (the one that answers it) is stopped."""
        self.close_connection = True
        if not reply.stream:
            data = reply.raw if reply.raw is not None else json.dumps(reply.body).encode()
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(data)))
            self.send_header("request-id", f"req_fake{next(_ids):04d}")
            for name, value in reply.headers.items():
                self.send_header(name, value)
            self.send_header("Connection", "close")
            self.end_headers()
            self.wfile.write(data)
            return
        if reply.silent:
            assert reply.release is not None
            fake._stall(reply.release)
            return
        chunked = reply.framing == "chunked"
        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("request-id", f"req_fake{next(_ids):04d}")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        for index, (name, payload) in enumerate(reply.events):
            if index == reply.pause_at:
                assert reply.release is not None
                self.wfile.flush()
                if reply.paused is not None:
                    reply.paused.set()
                fake._stall(reply.release)
            if reply.pace and index and fake._stopping.wait(reply.pace):
                break  # the server is stopping: no more of it
            data = _sse(name, payload)
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data) if chunked else data)
            if index == 0 and reply.begun is not None:
                reply.begun.set()
        if reply.sent is not None:
            reply.sent.set()
        if reply.ending == "complete":
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        elif reply.ending == "drop":
            # Close at once, mid-body: no last chunk.
            self.connection.shutdown(socket.SHUT_RDWR)
        else:
            assert reply.release is not None
            fake._stall(reply.release)


class _Server(ThreadingHTTPServer):
    daemon_threads = False  # server_close() joins every handler thread: nothing outlives the fake
    block_on_close = True
    fake: FakeAnthropic

    def handle_error(self, request: Any, client_address: Any) -> None:
        error = sys.exc_info()[1]
        if not isinstance(error, OSError):  # a client hanging up is not the fake's fault
            self.fake.errors.append(error)


class FakeAnthropic:
    """A Messages API on 127.0.0.1 that answers from a script; use it as a context manager.

    Attributes:
        requests: every request received, in order.
        errors: exceptions raised while handling requests (a bug in a test's script).
        fallback: the reply when the script is used up; None answers 400, which fails
            the run at once with a message that names the cause.
    """

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.errors: list[BaseException] = []
        self.fallback: Reply | None = None
        self.responder: Callable[[Any], Reply] | None = None  # answers from the request, once the script is done
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._stalls: list[threading.Event] = []
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._host: FakeAnthropic | None = None  # the server a routed model is answered on
        self._routes: list[tuple[Callable[[Any], bool], FakeAnthropic]] = []

    # --- script and record ----------------------------------------------------------

    def script(self, *replies: Reply) -> FakeAnthropic:
        """Queue ``replies``, one per coming request."""
        with self._lock:
            self._script.extend(replies)
        return self

    @property
    def pending(self) -> int:
        """Scripted replies not yet served."""
        with self._lock:
            return len(self._script)

    def _record(self, received: Received) -> None:
        with self._lock:
            self.requests.append(received)

    def _next_reply(self, body: Any = None) -> Reply:
        with self._lock:
            if self._script:
                return self._script.popleft()
        if self.responder is not None:
            return self.responder(body)
        if self.fallback is not None:
            return self.fallback
        return status(400, "invalid_request_error", "fake server: the script has no reply left for this request")

    def model_for(self, body: Any) -> FakeAnthropic:
        """The routed model whose ``matches`` takes this request's ``body``, or this server's own."""
        with self._lock:
            return next((model for matches, model in self._routes if matches(body)), self)

    @contextlib.contextmanager
    def routed(self, matches: Callable[[Any], bool]) -> Iterator[FakeAnthropic]:
        """A scripted model of its own on this running server: the requests whose body ``matches`` picks out
        are recorded in it and answered from its script (its ``requests``, ``script``, ``responder`` and
        ``fallback`` are its own; its ``url`` is the server's). Afterwards its stalled streams are released and
        requests it would have taken reach the server's own script."""
        model = FakeAnthropic()
        model._host = self
        route = (matches, model)
        with self._lock:
            self._routes.append(route)
        try:
            yield model
        finally:
            with self._lock:
                self._routes.remove(route)
            model._release()

    def _release(self) -> None:
        """Stop pacing and release every stalled stream of this model."""
        with self._lock:
            self._stopping.set()
            for release in self._stalls:
                release.set()

    def _stall(self, release: threading.Event) -> None:
        with self._lock:
            self._stalls.append(release)
            if self._stopping.is_set():
                release.set()
        release.wait(timeout=30)  # a bound, never reached in a passing test: stop() sets it

    # --- life cycle -------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._host is not None:
            return self._host.url
        assert self._server is not None, "the fake server is not running"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeAnthropic:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-anthropic", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Release stalled streams (its routed models' too), stop serving, and join every thread the server
        started."""
        self._release()
        with self._lock:
            routed = [model for _, model in self._routes]
        for model in routed:
            model._release()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def __enter__(self) -> FakeAnthropic:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
