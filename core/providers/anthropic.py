"""Provides ``AnthropicProvider``: the Messages API through ``anthropic.AsyncAnthropic``.

It always streams, and builds the assistant message from the raw stream events
(see ``message_builder``) so that every block (thinking with its signature,
redacted thinking, tool use) goes back to the model exactly as it came. The SDK's own retries are off: the
agent loop retries, so that every attempt is a visible ``retry`` event. Redirects
are not followed (the key would go along): a redirect is a setup error, as are a
malformed base URL, a key a header cannot carry, a status the API never sends
and a reply that is not HTTP (see ``server_checks``).

``import anthropic`` takes about two seconds, so this module imports it only
when the first request is made (in a thread, off the event loop).
"""

from __future__ import annotations

import asyncio
import functools
import os
import ssl
import sys
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from chimera.core import credentials
from chimera.core.errors import ProviderError
from chimera.core.providers.base import ModelChunk, ModelRequest
from chimera.core.providers.message_builder import MessageBuilder
from chimera.core.providers.server_checks import (
    check_base_url,
    check_credential,
    expected_status,
    first_bytes,
    not_http,
    not_tls,
    odd_status,
    redirected,
)
from chimera.core.strict_json import clean_text

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_BASE_URL", "AnthropicProvider"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
_RETRYABLE_STREAM_ERRORS = {"overloaded_error", "api_error", "rate_limit_error", "timeout_error"}
# Statuses that a proxy in front of a real API answers with its own page: keep their meaning.
_STATUSES_OF_PROXIES = frozenset({401, 403, 407, 408, 413, 429})
# Statuses that say the server does not do what the API does: a web server's "Not Implemented", another HTTP.
_STATUSES_OF_OTHER_SERVERS = frozenset({501, 505})
_DISCONNECTED = "Server disconnected without sending a response"  # httpx's words for a connection closed unanswered
DEFAULT_CONTEXT_WINDOW = 200_000
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


class AnthropicProvider:
    """Streams Messages API responses from Anthropic or any server that speaks the API.

    Args:
        model: the model name sent with every request.
        api_key: the key; ``ANTHROPIC_API_KEY`` when None (see :mod:`chimera.core.credentials`).
            Never stored elsewhere; whatever would carry it out of the process is masked.
        auth_token: a bearer token, used when there is no key; ``ANTHROPIC_AUTH_TOKEN`` when None.
        base_url: the server; ``ANTHROPIC_BASE_URL`` or Anthropic's when None.

    Raises ConfigError for a base URL that is not an http(s) address, or a key or token
    that an HTTP header cannot carry.
        thinking: the ``thinking`` request parameter, or None to leave it out.
        stall_timeout: seconds without a stream event before the stream counts as stalled.
        connect_timeout: seconds to open a connection.
        context_window: the model's context in tokens (200,000 when None), against which the
            loop measures when to compact.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str | None = None,
        auth_token: str | None = None,
        base_url: str | None = None,
        thinking: dict[str, Any] | None = None,
        stall_timeout: float = 90.0,
        connect_timeout: float = 10.0,
        context_window: int | None = None,
    ) -> None:
        self._model = model
        self._api_key = api_key if api_key is not None else credentials.get("ANTHROPIC_API_KEY")
        token = auth_token if auth_token is not None else credentials.get("ANTHROPIC_AUTH_TOKEN")
        self._auth_token = None if self._api_key else token
        self._secrets = tuple(s for s in (self._api_key, token, *credentials.values()) if s)
        if self._api_key:  # the credential that will be sent, and only that one
            check_credential("ANTHROPIC_API_KEY", self._api_key)
        elif self._auth_token:
            check_credential("ANTHROPIC_AUTH_TOKEN", self._auth_token)
        configured = base_url or os.environ.get("ANTHROPIC_BASE_URL") or DEFAULT_BASE_URL
        check_base_url(configured, "ANTHROPIC_BASE_URL" if base_url is None else "the base URL")
        self.base_url = configured.rstrip("/")
        self.thinking = thinking
        self.stall_timeout = stall_timeout
        self.connect_timeout = connect_timeout
        self.context_window = context_window or DEFAULT_CONTEXT_WINDOW
        self._client: anthropic.AsyncAnthropic | None = None

    def __repr__(self) -> str:  # never show the key
        return f"AnthropicProvider(model={self._model!r}, base_url={self.base_url!r})"

    @property
    def model(self) -> str:
        return self._model

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never reach the model, the events or the disk: its own and the process's credentials."""
        return self._secrets

    @property
    def native_thinking(self) -> bool:
        return bool(self.thinking) and self.thinking.get("type") != "disabled"  # type: ignore[union-attr]

    async def _get_client(self) -> anthropic.AsyncAnthropic:
        if self._client is None:
            sdk = await asyncio.to_thread(_import_sdk)
            credential = (
                {"auth_token": self._auth_token}
                if self._auth_token
                # A local server may need no key; the SDK insists on one.
                else {"api_key": self._api_key or "no-key-set"}
            )
            timeout = sdk.Timeout(self.stall_timeout + 5.0, connect=self.connect_timeout)
            self._client = sdk.AsyncAnthropic(
                **credential,
                base_url=self.base_url,
                max_retries=0,
                timeout=timeout,
                # The SDK's own client, but a redirect is answered, not followed: the key would go along.
                http_client=sdk.DefaultAsyncHttpxClient(follow_redirects=False, timeout=timeout),
            )
        return self._client

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None

    async def stream(self, request: ModelRequest) -> AsyncIterator[ModelChunk]:
        client = await self._get_client()
        sdk = _import_sdk()
        params: dict[str, Any] = {
            "model": self._model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": request.messages,
            "stream": True,
        }
        if request.tools:
            params["tools"] = request.tools
        thinking = request.thinking if request.thinking is not None else self.thinking
        if thinking:
            params["thinking"] = thinking
        builder = MessageBuilder()
        try:
            try:
                async with asyncio.timeout(self.stall_timeout):  # not wait_for: in 3.11 it can swallow a cancel
                    stream = await client.messages.create(**params)
            except (ValueError, TypeError) as err:
                # The body could not be encoded (a lone surrogate, a NaN): a bug or bad data in the
                # context, never a network fault. Sending it again would fail the same way.
                raise ProviderError(
                    f"the request could not be encoded as JSON ({type(err).__name__}: {err}): "
                    "this is a bug in Chimera or damaged session data; please report it",
                    kind="encoding",
                    retryable=False,
                ) from None
            async with stream:
                url = str(stream.response.request.url)
                if stream.response.status_code != 200:  # another 2xx: the API streams with 200 alone
                    raise odd_status(url, stream.response.status_code)
                content_type = stream.response.headers.get("content-type", "")
                if content_type and not content_type.lower().startswith("text/event-stream"):
                    raise _not_the_api(url, stream.response.status_code, _describe(content_type))
                iterator = stream.__aiter__()
                while True:
                    try:
                        async with asyncio.timeout(self.stall_timeout):
                            event = await iterator.__anext__()
                    except StopAsyncIteration:
                        break
                    try:
                        # The server's values are checked here (usage counts may be any JSON at all),
                        # so the SDK's warnings about values that do not fit its types are not wanted.
                        data = event.to_dict(mode="json", warnings=False)
                        if not builder.started and data.get("type") != "message_start":
                            what = "an event stream that does not begin with message_start"
                            raise _not_the_api(url, stream.response.status_code, what)
                        chunk = builder.feed(data)
                    except (KeyError, TypeError, ValueError, AttributeError) as err:
                        # Asking again will not change the server's dialect: fail at once.
                        raise ProviderError(
                            f"the server's stream does not follow the Messages API ({type(err).__name__}: {err}); "
                            "check that ANTHROPIC_BASE_URL points at a server that speaks it",
                            kind="protocol",
                            retryable=False,
                        ) from None
                    if chunk is not None:
                        yield chunk
                if not builder.started:  # a whole stream, and not one Messages API event in it
                    raise _not_the_api(url, stream.response.status_code, "an event stream with no message in it")
        except ProviderError:
            raise
        except TimeoutError:
            raise ProviderError(
                f"the model stream stalled: nothing for {self.stall_timeout:g}s",
                kind="stalled",
                retryable=True,
            ) from None
        except sdk.APIError as err:
            error = _translate(err, sdk, self._model, self.base_url, started=builder.started)
            if error.kind == "unreachable" and _DISCONNECTED in _causes(err):
                # It took the connection and closed it unanswered: is something other than HTTP there?
                answer = await asyncio.to_thread(first_bytes, self.base_url)
                if answer and not answer.startswith(b"HTTP/"):
                    error = not_http(self.base_url, f"it answers {answer.decode('latin-1')[:40]!r}")
            raise error from None
        except _broken_stream_errors() as err:
            # The SDK wraps failures to send the request, not those met while reading the
            # streamed body: a connection cut mid-chunk, an event that is not JSON. Anything
            # else is a bug, and goes up as one instead of being retried as a network fault.
            raise ProviderError(
                f"the response stream broke off: {type(err).__name__}: {err}",
                kind="connection",
                retryable=True,
            ) from None
        if not builder.stopped:
            raise ProviderError(
                "the connection closed before the message was complete",
                kind="incomplete",
                retryable=True,
            )
        yield builder.done(self._model)


def _import_sdk() -> Any:
    import anthropic

    return anthropic


@functools.cache
def _broken_stream_errors() -> tuple[type[BaseException], ...]:
    """What reading a streamed body raises when the stream breaks: socket errors, bad JSON, and the
    HTTP client's own errors (the SDK's transport is ``httpx`` or, in newer releases, ``httpx2``)."""
    transports = (sys.modules.get(name) for name in ("httpx2", "httpx"))
    return (OSError, ValueError, *(module.HTTPError for module in transports if module is not None))


def _one_line(text: str, limit: int = 300) -> str:
    """The server's words for an error, as one clean line of at most ``limit`` characters."""
    line = " ".join(clean_text(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def _describe(content_type: str) -> str:
    """What a response of ``content_type`` is, in words: ``an HTML page``, ``plain text``."""
    media = content_type.split(";")[0].strip().lower()
    if "html" in media:
        return "an HTML page"
    if media == "text/plain":
        return "plain text"
    if media.endswith("json"):
        return "a JSON document"
    return f"a response of type {media[:60]!r}" if media else "a response with no content type"


def _not_the_api(url: str, status: int, what: str) -> ProviderError:
    """The error for a server that answered, but not as the Messages API: a setup error, never retried."""
    return ProviderError(
        f"{url} answered with {what} (HTTP {status}), not the Messages API: "
        "check ANTHROPIC_BASE_URL (Chimera adds /v1/messages to it)",
        kind="protocol",
        retryable=False,
        status=status,
    )


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


def _translate(err: Any, sdk: Any, model: str, base_url: str, *, started: bool) -> ProviderError:
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
            return not_http(base_url, _one_line(str(protocol), 80))
        if _DISCONNECTED in causes:
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
        return _not_the_api(url, status, _describe(str(err.response.headers.get("content-type", ""))))
    if status >= 300 and not _is_json(err):  # (a 200 here is an error event in the stream: its body is JSON)
        kind_of_body = _describe(str(err.response.headers.get("content-type", "")))
        if 400 <= status < 500 and status not in _STATUSES_OF_PROXIES:
            # A web page where the API should be (a 404 from a web server, a 405): the URL is wrong.
            return _not_the_api(url, status, kind_of_body)
        api_message = kind_of_body  # never a whole page in a one-line error
    else:
        api_message = getattr(err, "api_message", None) or _body_message(err.body) or str(err)
    api_message = _one_line(api_message)
    error_type = getattr(err, "type", None) or _body_type(err.body)
    if status == 200:  # an `error` event after the stream began: the SDK never retries these
        return ProviderError(
            f"the server sent an error mid-stream ({error_type}): {api_message}",
            kind="stream_error",
            retryable=error_type in _RETRYABLE_STREAM_ERRORS,
        )
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
