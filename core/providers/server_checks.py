"""Provides the checks of a model server's setup: its address, the credentials, and what answers there.

A wrong setup must end a run at once with one line naming the cause and the
fix, never as a lost connection retried for a minute or a traceback:

* :func:`check_base_url` refuses an ``ANTHROPIC_BASE_URL`` that is not an
  http(s) address (``htp:/x``, ``http://[::1``, ``localhost:99999``);
* :func:`check_credential` refuses a key or token an HTTP header cannot carry
  (a line break, a control character, a space, a letter that is not ASCII,
  bytes that are not UTF-8), naming where without ever showing the value;
* :func:`odd_status`, :func:`redirected`, :func:`not_the_api`, :func:`not_http`
  and :func:`not_tls` word the answers of a server that is not the Messages
  API: a status neither HTTP nor the API sends (599, 299), a redirect (never
  followed, so the key goes nowhere else), a web page or another body where the
  event stream should be (said in words by :func:`describe_body`), a reply that
  is not HTTP at all, TLS that fails (plain HTTP behind an https:// address, a
  certificate not trusted);
* :func:`first_bytes` looks at what answers a bare HTTP request, to tell a
  service that speaks something else from one that closed the connection.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
from http import HTTPStatus
from urllib.parse import urljoin, urlsplit

from chimera.core.errors import ConfigError, ProviderError

__all__ = [
    "check_base_url",
    "check_credential",
    "describe_body",
    "expected_status",
    "first_bytes",
    "not_http",
    "not_the_api",
    "not_tls",
    "odd_status",
    "redirected",
]

EXAMPLES = "such as http://localhost:8080 or https://api.anthropic.com"
_SERVER_TROUBLE = frozenset({529, 520, 521, 522, 523, 524})  # Anthropic's overloaded; a CDN's origin errors


def check_base_url(url: str, name: str = "ANTHROPIC_BASE_URL") -> None:
    """ConfigError unless ``url`` is an http(s) address with a host (and a port, if any, from 1 to 65535)."""
    why = _url_problem(url)
    if why is not None:
        raise ConfigError(f"{name} {url!r} is not a server address ({why}): set it to one {EXAMPLES}")


def _url_problem(url: str) -> str | None:
    bad = next((ch for ch in url if ch.isspace() or not ch.isprintable()), None)
    if bad is not None:
        return "it holds a space or a control character"
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as err:  # an unclosed [IPv6 bracket, a port that is not a number from 0 to 65535
        return str(err).replace("0-65535", "1-65535")
    if parts.scheme not in {"http", "https"}:
        return "it must begin with http:// or https://"
    if not parts.hostname:
        return "it names no host"
    if port == 0:
        return "port 0 is no port"
    return None


def check_credential(name: str, value: str) -> None:
    """ConfigError when ``value`` (the variable ``name``) holds what an HTTP header cannot carry; it is never shown."""
    for index, char in enumerate(value):
        what = _unsendable(char)
        if what is not None:
            raise ConfigError(
                f"{name} holds {what} (character {index + 1}), which an HTTP header cannot carry: "
                f"set it to the {'token' if 'TOKEN' in name else 'key'} alone, exactly as it was issued"
            )


def _unsendable(char: str) -> str | None:
    if "\ud800" <= char <= "\udfff":  # what the environment's bytes that are not UTF-8 decode to
        return "bytes that are not UTF-8"
    if char in "\r\n":
        return "a line break"
    if char == "\t":
        return "a tab"
    if char.isspace():
        return "a space"
    if char < " " or "\x7f" <= char <= "\x9f":
        return "a control character"
    if not char.isprintable():  # a zero-width space, a bidi mark
        return "an invisible character"
    if not char.isascii():
        return "a character that is not ASCII"
    return None


def expected_status(status: int) -> bool:
    """Whether ``status`` is one HTTP defines, or one API servers and their CDNs are known to send (529, 520-524)."""
    if status in _SERVER_TROUBLE:
        return True
    try:
        HTTPStatus(status)
    except ValueError:
        return False
    return True


def odd_status(url: str, status: int) -> ProviderError:
    """The setup error for a status the Messages API never sends (599, 299, a 2xx that is not 200)."""
    return ProviderError(
        f"{url} answered with HTTP {status}, a status the Messages API never sends: "
        "check that ANTHROPIC_BASE_URL points at a server that speaks it (Chimera adds /v1/messages to it)",
        kind="protocol",
        retryable=False,
        status=status,
    )


def redirected(url: str, status: int, location: str | None) -> ProviderError:
    """The setup error for a redirect: never followed, since the key would go along to wherever it leads."""
    target = f" to {urljoin(url, location)}" if location else ""
    return ProviderError(
        f"{url} answered with a redirect (HTTP {status}){target}, which Chimera does not follow "
        "(the key would go along): set ANTHROPIC_BASE_URL to the address the server is reached at",
        kind="protocol",
        retryable=False,
        status=status,
    )


def not_the_api(url: str, status: int, what: str) -> ProviderError:
    """The error for a server that answered, but not as the Messages API: a setup error, never retried."""
    return ProviderError(
        f"{url} answered with {what} (HTTP {status}), not the Messages API: "
        "check ANTHROPIC_BASE_URL (Chimera adds /v1/messages to it)",
        kind="protocol",
        retryable=False,
        status=status,
    )


def describe_body(content_type: str) -> str:
    """What a response of ``content_type`` is, in words: ``an HTML page``, ``plain text``."""
    media = content_type.split(";")[0].strip().lower()
    if "html" in media:
        return "an HTML page"
    if media == "text/plain":
        return "plain text"
    if media.endswith("json"):
        return "a JSON document"
    return f"a response of type {media[:60]!r}" if media else "a response with no content type"


def not_http(base_url: str, detail: str) -> ProviderError:
    """The setup error for a server that answers in something other than HTTP."""
    return ProviderError(
        f"the server at {base_url} did not answer in HTTP ({detail}): check ANTHROPIC_BASE_URL, "
        "its host and port, and http:// against https://",
        kind="protocol",
        retryable=False,
    )


def not_tls(base_url: str, error: ssl.SSLError) -> ProviderError:
    """The setup error for an https:// address where TLS fails: plain HTTP there, or a certificate not trusted."""
    if isinstance(error, ssl.SSLCertVerificationError):
        fix = "give the server a certificate this machine trusts, or fix ANTHROPIC_BASE_URL"
        what = f"its certificate was not accepted: {error.verify_message or error.reason}"
    else:
        fix = "if it serves plain HTTP, begin ANTHROPIC_BASE_URL with http://"
        what = f"TLS failed: {error.reason or error}"
    return ProviderError(
        f"the server at {base_url} did not answer in HTTPS ({what}): {fix}", kind="protocol", retryable=False
    )


def first_bytes(base_url: str, *, timeout: float = 3.0) -> bytes:
    """What a plain-HTTP server at ``base_url`` answers a bare request with (at most 64 bytes; b"" for nothing).

    Used once a request met a connection closed without a response, to tell a service that
    speaks something else (SSH, Redis) from one that just hung up. Nothing secret is sent.
    Empty for an https address, or one reached through a proxy, where a bare look proves nothing.
    """
    import urllib.request  # here: it (and http.client, email) would load with every start, for a rare failure

    parts = urlsplit(base_url)
    host, port = parts.hostname, parts.port or 80
    if parts.scheme != "http" or not host or (urllib.request.getproxies().get("http") and not _bypassed(host)):
        return b""
    path = parts.path.rstrip("/") + "/v1/messages"
    request = f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    data = b""
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request.encode("ascii", "replace"))
        while len(data) < 64:
            chunk = sock.recv(64 - len(data))
            if not chunk:
                break
            data += chunk
    return data


def _bypassed(host: str) -> bool:
    import urllib.request

    return bool(urllib.request.proxy_bypass(host))
