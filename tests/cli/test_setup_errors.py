"""A wrong setup ends `chimera run` at once: exit 2, one line naming the cause and the fix, no retries.

A malformed ``ANTHROPIC_BASE_URL``, a server that redirects, a status no HTTP server
or Messages API sends, a reply that is not HTTP at all, and an API key an HTTP
header cannot carry: each is said for what it is, never as a traceback, a lost
connection or a minute of retries. The key itself is never printed.
"""

from __future__ import annotations

import os
import socket
import struct
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.anthropic_harness import serve_fake
from tests.cli_runner import assert_one_line_error, chimera_command, run_here
from tests.fake_anthropic import DEFAULT_MODEL as MODEL
from tests.fake_anthropic import FakeAnthropic, Reply, message, page, status, text

KEY = "sk-ant-setup-0123456789-secret"
QUICK = 20.0  # seconds: far more than a run that fails at once needs, far less than retries over a minute


def run_with(base_url: str, tmp_path: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": KEY, "CHIMERA_MODEL": MODEL, **extra}
    started = time.monotonic()
    proc = run_here("run", "x", "--workdir", str(tmp_path), env=env, timeout=60)
    assert time.monotonic() - started < QUICK, proc.stderr
    return proc


def sessions(home: Path) -> list[Path]:
    return sorted((home / "sessions").glob("*")) if (home / "sessions").is_dir() else []


# --- a malformed ANTHROPIC_BASE_URL ----------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "htp:/x",
        "http://[::1",
        "localhost:99999",
        "http://localhost:99999",
        "http://",
        "ftp://example.com",
        "http://exa mple.com",
        "http://localhost:8080\n",
        "http://loc\x1bhost",
        "//localhost:8080",
        "http://localhost:-1",
    ],
)
def test_a_malformed_base_url_is_one_line_naming_it(isolated_env: Path, tmp_path: Path, url: str) -> None:
    """A base URL that is not an http(s) address is refused before any session or request: exit 2, one line."""
    proc = run_with(url, tmp_path)
    assert_one_line_error(proc, "ANTHROPIC_BASE_URL", "is not a server address", "http://")
    assert "reach" not in proc.stderr
    assert sessions(isolated_env) == []


def test_a_sound_base_url_with_a_path_still_works(api: FakeAnthropic, tmp_path: Path) -> None:
    """An address with a trailing slash, or a path of a proxy in front of the API, is taken as it is."""
    api.script(message(text("Hello.")))
    proc = run_with(api.url + "/", tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "Hello.\n"), proc.stderr


# --- a server that redirects ------------------------------------------------------------------


def redirect(code: int, location: str) -> Reply:
    return Reply(status=code, headers={"Location": location}, raw=b"", content_type="text/html", stream=False)


@pytest.mark.parametrize("code", [301, 302, 307, 308])
def test_a_redirect_is_one_line_naming_where_it_leads_and_is_never_followed(
    api: FakeAnthropic, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    """A redirect (a loop, or another address) is not followed, so the key goes nowhere else: exit 2, one line."""
    api.fallback = redirect(code, "/v1/messages")  # a loop, if it were followed
    loop = run_with(api.url, tmp_path)
    assert_one_line_error(loop, f"redirect (HTTP {code})", f"{api.url}/v1/messages", "ANTHROPIC_BASE_URL")
    assert len(api.requests) == 1
    with serve_fake(monkeypatch) as elsewhere:
        api.fallback = redirect(code, f"{elsewhere.url}/v1/messages")
        moved = run_with(api.url, tmp_path)
        assert_one_line_error(moved, f"to {elsewhere.url}/v1/messages", "ANTHROPIC_BASE_URL")
        assert elsewhere.requests == []  # the key never went there
    assert KEY not in loop.stderr + moved.stderr


# --- statuses no HTTP server or Messages API sends ---------------------------------------------


def with_status(reply: Reply, code: int) -> Reply:
    reply.status = code
    return reply


@pytest.mark.parametrize(
    "reply",
    [
        status(599, "api_error", "whatever"),
        page("odd", code=599, content_type="text/plain"),
        status(299, "api_error", "whatever"),
        with_status(message(text("Hello.")), 299),
        status(499, "invalid_request_error", "client closed"),
        page("<html>Not Implemented</html>", code=501),
        status(999, "api_error", "whatever"),
    ],
    ids=["599-json", "599-text", "299-json", "299-stream", "499", "501", "999"],
)
def test_a_status_the_api_never_sends_is_one_line_and_not_retried(
    api: FakeAnthropic, tmp_path: Path, reply: Reply
) -> None:
    """A status like 599, 299 or 999 at ANTHROPIC_BASE_URL ends the run at once: exit 2, one line, one request."""
    api.fallback = reply
    proc = run_with(api.url, tmp_path)
    assert_one_line_error(proc, f"HTTP {reply.status}", "ANTHROPIC_BASE_URL")
    assert len(api.requests) == 1
    assert "retry" not in proc.stderr


def test_a_real_server_error_is_still_retried(api: FakeAnthropic, tmp_path: Path) -> None:
    """A 503 is the server's trouble, not the setup's: it is retried and the run goes on."""
    api.script(status(503, "api_error", "busy"), message(text("Back.")))
    proc = run_with(api.url, tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "Back.\n"), proc.stderr
    assert "retry 1 (server)" in proc.stderr


# --- a reply that is not HTTP -------------------------------------------------------------------


class NotHttp:
    """A loopback server that answers every connection with ``reply`` (not HTTP) and closes it."""

    def __init__(self, reply: bytes, *, reset: bool = False) -> None:
        self.reply = reply
        self.reset = reset  # close with a reset (RST), as a server does that closes with a request unread
        self.connections = 0
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self.stopping.is_set():
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.connections += 1
            with conn:
                conn.settimeout(2)
                try:
                    conn.recv(65536)
                    conn.sendall(self.reply)
                    if self.reset:
                        conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                        continue
                    conn.shutdown(socket.SHUT_WR)  # the reply ends here
                    while conn.recv(65536):  # the rest of the request read, so closing never resets the line
                        pass
                except OSError:
                    pass

    def __enter__(self) -> NotHttp:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopping.set()
        self.thread.join()
        self.sock.close()


@pytest.mark.parametrize(
    "reply",
    [b"SSH-2.0-OpenSSH_9.6\r\n", b"HTTP/1.1 abc Nonsense\r\n\r\n", b"\x15\x03\x01\x00\x02\x02\x46", b"+OK redis\r\n"],
    ids=["ssh", "bad-status-line", "tls-alert", "redis"],
)
def test_a_reply_that_is_not_http_is_one_line_and_not_retried(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reply: bytes
) -> None:
    """Something other than HTTP at ANTHROPIC_BASE_URL (another service, TLS on an http:// URL): exit 2 at once."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with NotHttp(reply) as server:
        proc = run_with(server.url, tmp_path)
    assert_one_line_error(proc, server.url, "did not answer in HTTP", "ANTHROPIC_BASE_URL")
    assert "connection" not in proc.stderr
    assert server.connections <= 2  # the request, and at most one look at what answers: never a retry


def test_https_to_a_plain_http_server_is_one_line(api: FakeAnthropic, tmp_path: Path) -> None:
    """https:// in front of a server that speaks plain HTTP: exit 2 at once, saying to use http://."""
    url = api.url.replace("http://", "https://")
    proc = run_with(url, tmp_path)
    assert_one_line_error(proc, url, "did not answer in HTTPS", "begin ANTHROPIC_BASE_URL with http://")
    assert api.requests == []


def test_a_server_that_hangs_up_unanswered_is_named_for_that(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server that takes the connection and closes it with no answer is said to do so: exit 2, no retries."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with NotHttp(b"") as server:
        proc = run_with(server.url, tmp_path)
    assert_one_line_error(proc, server.url, "closed the connection without an answer", "ANTHROPIC_BASE_URL")
    assert "cannot reach" not in proc.stderr


def test_a_server_that_resets_the_connection_unanswered_is_named_for_that(
    isolated_env: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Closed with a reset (the request not read to its end), it was reached all the same: not "cannot reach"."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with NotHttp(b"", reset=True) as server:
        proc = run_with(server.url, tmp_path)
    assert_one_line_error(proc, server.url, "closed the connection without an answer", "ANTHROPIC_BASE_URL")
    assert "cannot reach" not in proc.stderr


# --- an API key an HTTP header cannot carry -----------------------------------------------------


@pytest.mark.parametrize(
    ("key", "said"),
    [
        (KEY + "\n", "a line break"),
        ("sk-ant-a\nb-0123456789", "a line break"),
        ("sk-ant-ключ-0123456789", "a character that is not ASCII"),
        ("sk-ant-\x00nul-0123456789", "a control character"),
        (" " + KEY, "a space"),
        (KEY + "\t", "a tab"),
        ("sk-ant-\u200b-0123456789", "an invisible character"),
    ],
    ids=["trailing-newline", "newline", "cyrillic", "nul", "space", "tab", "zero-width"],
)
def test_a_key_a_header_cannot_carry_is_one_line_and_never_printed(
    api: FakeAnthropic, tmp_path: Path, key: str, said: str
) -> None:
    """ANTHROPIC_API_KEY with a line break, a non-ASCII letter or a control character: exit 2, one line, no request."""
    if "\x00" in key:  # no environment variable can hold NUL: the library takes it as an argument
        from chimera.core.errors import ConfigError
        from chimera.core.providers.anthropic import AnthropicProvider

        with pytest.raises(ConfigError) as caught:
            AnthropicProvider(MODEL, api_key=key, base_url=api.url)
        assert said in str(caught.value)
        assert key not in str(caught.value)
        return
    proc = run_with(api.url, tmp_path, ANTHROPIC_API_KEY=key)
    assert_one_line_error(proc, "ANTHROPIC_API_KEY", said)
    assert key.strip() not in proc.stderr
    assert api.requests == []


def test_a_key_that_is_not_utf8_is_one_line(api: FakeAnthropic, tmp_path: Path) -> None:
    """Key bytes that are not UTF-8 at all are named as such: exit 2, one line, no request."""
    env = {**os.environ, "ANTHROPIC_BASE_URL": api.url, "CHIMERA_MODEL": MODEL}
    command = [os.fsencode(part) for part in chimera_command()]
    proc = subprocess.run(
        [*command, b"run", b"x", b"--workdir", os.fsencode(tmp_path)],
        capture_output=True,
        env={**{k.encode(): v.encode() for k, v in env.items()}, b"ANTHROPIC_API_KEY": b"sk-ant-\xff\xfe-0123456789"},
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    result = subprocess.CompletedProcess(proc.args, proc.returncode, proc.stdout.decode(), proc.stderr.decode())
    assert_one_line_error(result, "ANTHROPIC_API_KEY", "not UTF-8")
    assert api.requests == []


def test_an_auth_token_a_header_cannot_carry_is_named_too(api: FakeAnthropic, tmp_path: Path) -> None:
    """ANTHROPIC_AUTH_TOKEN is checked the same way, and named in the line."""
    env = {"ANTHROPIC_BASE_URL": api.url, "ANTHROPIC_AUTH_TOKEN": "tok-0123456789\nx", "CHIMERA_MODEL": MODEL}
    proc = run_here("run", "x", "--workdir", str(tmp_path), env=env, timeout=60)
    assert_one_line_error(proc, "ANTHROPIC_AUTH_TOKEN", "a line break")
    assert api.requests == []
