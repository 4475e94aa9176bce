"""Provides the translation of what the Anthropic SDK raises into ``ProviderError``s.

Each error gets a kind the loop acts on (retry, compact, give up), whether it is
worth retrying, and one line naming the cause and the fix: a key rejected, a
model not found, a rate limit (with the server's ``retry-after``), a server
overloaded or failing, a prompt too long (in the words of Anthropic and of the
local servers that speak its API), an error event mid-stream, a server that
cannot be reached or is not the Messages API (see ``server_checks``).
"""

from __future__ import annotations

import asyncio
import functools
import json
import ssl
import sys
from collections.abc import Callable
from typing import Any

from chimera.core.errors import ProviderError
from chimera.core.providers.server_checks import (
    describe_body,
    expected_status,
    first_bytes,
    not_http,
    not_the_api,
    not_tls,
    odd_status,
    redirected,
)
from chimera.core.strict_json import clean_text
from chimera.core.terminal_text import flat

__all__ = ["broken_stream_errors", "stream_error", "translate_api_error"]

_RETRYABLE_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
# Statuses that a proxy in front of a real API answers with its own page: keep their meaning.
_STATUSES_OF_PROXIES = frozenset({401, 403, 407, 408, 413, 429})
# Statuses that say the server does not do what the API does: a web server's "Not Implemented", another HTTP.
_STATUSES_OF_OTHER_SERVERS = frozenset({501, 505})
_DISCONNECTED = "Server disconnected without sending a response"  # httpx's words for a connection closed unanswered
# How Anthropic and the local servers that speak its API say the prompt does not fit the model's context.
_TOO_LONG = (
    "prompt is too long",  # Anthropic
    "exceeds the available context size",  # llama.cpp server
    "exceeds the context",
    "maximum context length",  # vLLM, LiteLLM (OpenAI's words)
    "maximum model length",  # vLLM's V1 engine
    "context length exceeded",
    "context_length_exceeded",
    "contextwindowexceeded",  # LiteLLM's exception, named in its message
    "context window exceeded",
    "greater than the context length",  # LM Studio
)
_TOO_LONG_TYPES = frozenset({"exceed_context_size_error", "context_length_exceeded"})  # llama.cpp, OpenAI


async def translate_api_error(
    err: Any, sdk: Any, model: str, base_url: str, *, started: bool, mask: Callable[[str], str] = str
) -> ProviderError:
    """The ProviderError for ``err``, an ``anthropic.APIError`` met asking ``model`` at ``base_url``.

    ``started`` says whether the stream had begun. A connection closed unanswered is looked
    into (in a thread): a service that answers in something other than HTTP is a setup error.
    What the server said is given to ``mask`` (the secrets to hide) before it is cut to size.
    """
    error = _translate(err, sdk, model, base_url, started=started, mask=mask)
    if error.kind == "unreachable" and _hung_up(err):
        # It took the connection and closed it unanswered: is something other than HTTP there?
        answer = await asyncio.to_thread(first_bytes, base_url)
        if answer and not answer.startswith(b"HTTP/"):
            error = not_http(base_url, f"it answers {mask(answer.decode('latin-1'))[:40]!r}")
    return error


def stream_error(data: str, mask: Callable[[str], str] = str) -> ProviderError:
    """The ProviderError for an ``error`` event in a stream that began with 200, whose data is ``data``
    (the API's error object as JSON, or whatever the server put there). Retried when the error is the
    server's passing state (overloaded, rate limited, timed out, failed)."""
    try:
        body: object = json.loads(data)
    except ValueError:
        body = data
    error_type = _body_type(body)
    api_message = _one_line(_body_message(body) or data or "no details", 300, mask)
    return ProviderError(
        f"the server sent an error mid-stream ({error_type or 'no type'}): {api_message}",
        kind="stream_error",
        retryable=error_type in _RETRYABLE_STREAM_ERRORS,
    )


@functools.cache
def broken_stream_errors() -> tuple[type[BaseException], ...]:
    """What reading a streamed body raises when the stream breaks: socket errors, bad JSON, and the
    HTTP client's own errors (the SDK's transport is ``httpx`` or, in newer releases, ``httpx2``)."""
    transports = (sys.modules.get(name) for name in ("httpx2", "httpx"))
    return (OSError, ValueError, *(module.HTTPError for module in transports if module is not None))


def _one_line(text: str, limit: int, mask: Callable[[str], str]) -> str:
    """The server's words for an error, masked, as one clean line of at most ``limit`` characters."""
    line = flat(mask(clean_text(text)))
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _is_json(err: Any) -> bool:
    response = getattr(err, "response", None)
    if response is None:
        return True
    return str(response.headers.get("content-type", "")).split(";")[0].strip().lower().endswith("json")


def _retry_after(err: Any) -> float | None:
    response = getattr(err, "response", None)
    if response is None:
        return None
    headers = response.headers
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value:
            try:
                return max(0.0, float(value) * scale)
            except ValueError:
                continue
    return None


def _translate(
    err: Any, sdk: Any, model: str, base_url: str, *, started: bool, mask: Callable[[str], str]
) -> ProviderError:
    """Turn an SDK exception into a ProviderError whose message names the cause and the fix."""
    if isinstance(err, sdk.APITimeoutError):
        return ProviderError("the model request timed out", kind="stalled", retryable=True)
    if isinstance(err, sdk.APIConnectionError):
        if started:
            return ProviderError(
                "the connection dropped in the middle of the response", kind="connection", retryable=True
            )
        causes = _causes(err)
        tls = next((e for e in _chain(err) if isinstance(e, ssl.SSLError)), None)
        if tls is not None:
            return not_tls(base_url, tls)
        protocol = next((e for e in _chain(err) if type(e).__name__ == "RemoteProtocolError"), None)
        if protocol is not None and _DISCONNECTED not in causes:
            return not_http(base_url, _one_line(str(protocol), 80, mask))
        if _hung_up(err):
            return ProviderError(
                f"the server at {base_url} closed the connection without an answer: "
                "check that it serves the Messages API, and the port in ANTHROPIC_BASE_URL",
                kind="unreachable",
                retryable=True,
            )
        return ProviderError(
            f"cannot reach the model server at {base_url}: start it, or fix ANTHROPIC_BASE_URL",
            kind="unreachable",
            retryable=True,
        )
    if not isinstance(err, sdk.APIStatusError):
        return ProviderError(f"the model request failed: {err}", kind="server", retryable=False)
    status = err.status_code
    url = str(err.response.request.url)
    if 300 <= status < 400:
        return redirected(url, status, err.response.headers.get("location"))
    if not expected_status(status):
        return odd_status(url, status)
    if status in _STATUSES_OF_OTHER_SERVERS:
        return not_the_api(url, status, describe_body(mask(str(err.response.headers.get("content-type", "")))))
    if not _is_json(err):
        kind_of_body = describe_body(mask(str(err.response.headers.get("content-type", ""))))
        if 400 <= status < 500 and status not in _STATUSES_OF_PROXIES:
            # A web page where the API should be (a 404 from a web server, a 405): the URL is wrong.
            return not_the_api(url, status, kind_of_body)
        api_message = kind_of_body  # never a whole page in a one-line error
    else:
        api_message = getattr(err, "api_message", None) or _body_message(err.body) or str(err)
    api_message = _one_line(api_message, 300, mask)
    error_type = getattr(err, "type", None) or _body_type(err.body)
    if status == 401:
        return ProviderError(
            f"the API key was rejected (401) by {base_url}: set ANTHROPIC_API_KEY to a valid key",
            kind="auth",
            retryable=False,
            status=status,
        )
    if status == 403:
        return ProviderError(
            f"the API key may not use this model or server (403): {api_message}",
            kind="permission",
            retryable=False,
            status=status,
        )
    if status == 404:
        return ProviderError(
            f"model {model!r} was not found (404) at {base_url}: "
            "pass --model (or set CHIMERA_MODEL) to a model the server offers",
            kind="not_found",
            retryable=False,
            status=status,
        )
    if status == 429:
        return ProviderError(
            f"rate limited (429): {api_message}",
            kind="rate_limit",
            retryable=True,
            retry_after=_retry_after(err),
            status=status,
        )
    if status == 529 or error_type == "overloaded_error":
        return ProviderError(
            f"the server is overloaded ({status})",
            kind="overloaded",
            retryable=True,
            retry_after=_retry_after(err),
            status=status,
        )
    if status >= 500:
        return ProviderError(
            f"the server failed ({status}): {api_message}",
            kind="server",
            retryable=True,
            retry_after=_retry_after(err),
            status=status,
        )
    if status == 400 and (error_type in _TOO_LONG_TYPES or any(words in api_message.lower() for words in _TOO_LONG)):
        return ProviderError(f"the prompt is too long: {api_message}", kind="prompt_too_long", retryable=False)
    return ProviderError(
        f"the server refused the request ({status}): {api_message}",
        kind="bad_request",
        retryable=False,
        status=status,
    )


def _chain(err: BaseException) -> list[BaseException]:
    """``err`` and the exceptions it was raised from, outermost first (the SDK wraps the HTTP client's)."""
    chain: list[BaseException] = []
    current: BaseException | None = err
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__ or current.__context__
    return chain


def _hung_up(err: BaseException) -> bool:
    """Whether the server took the connection and closed it before answering: with a FIN (httpx's words
    for it), or with a reset (as a server does that closes with the request not read to its end)."""
    chain = _chain(err)
    if _DISCONNECTED in _causes(err):
        return True
    connected = not any(type(e).__name__ == "ConnectError" for e in chain)
    return connected and any(isinstance(e, ConnectionResetError) for e in chain)


def _causes(err: BaseException) -> str:
    """The words of every exception in ``err``'s chain."""
    return " | ".join(str(e) for e in _chain(err))


def _body_error(body: object) -> dict[str, Any]:
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict):
            return error
    return {}


def _body_message(body: object) -> str:
    return str(_body_error(body).get("message") or "")


def _body_type(body: object) -> str:
    return str(_body_error(body).get("type") or "")
