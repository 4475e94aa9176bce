"""Provides ``AnthropicProvider``: the Messages API through ``anthropic.AsyncAnthropic``.

It always streams, reads the events from the body's bytes itself (see ``sse``),
and builds the assistant message from them (see ``message_builder``) so that
every block (thinking with its signature, redacted thinking, tool use) goes back
to the model exactly as it came. The
SDK's own retries are off: the agent loop retries, so that every attempt is a
visible ``retry`` event. Redirects are not followed (the key would go along): a
redirect is a setup error, as are a malformed base URL, a key a header cannot
carry, a status the API never sends and a reply that is not HTTP (see
``server_checks``). Whatever else the SDK raises becomes a ``ProviderError``
that names the cause and the fix (see ``api_errors``).

``import anthropic`` takes about two seconds, so this module imports it only
when the first request is made (in a thread, off the event loop).
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from chimera.core import credentials
from chimera.core.errors import ProviderError
from chimera.core.providers.api_errors import broken_stream_errors, stream_error, translate_api_error
from chimera.core.providers.base import ModelChunk, ModelRequest
from chimera.core.providers.message_builder import MessageBuilder, StreamBroken
from chimera.core.providers.server_checks import (
    check_base_url,
    check_credential,
    describe_body,
    not_the_api,
    odd_status,
)
from chimera.core.providers.sse import EventReader, EventTooLarge, ServerSentEvent
from chimera.core.redact import Redactor

if TYPE_CHECKING:
    import anthropic

__all__ = ["DEFAULT_BASE_URL", "AnthropicProvider"]

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_CONTEXT_WINDOW = 200_000


class AnthropicProvider:
    """Streams Messages API responses from Anthropic or any server that speaks the API.

    Args:
        model: the model name sent with every request.
        api_key: the key; ``ANTHROPIC_API_KEY`` when None (see :mod:`chimera.core.credentials`).
            Never stored elsewhere; whatever would carry it out of the process is masked.
        auth_token: a bearer token, used when there is no key; ``ANTHROPIC_AUTH_TOKEN`` when None.
        base_url: the server; ``ANTHROPIC_BASE_URL`` or Anthropic's when None.
        thinking: the ``thinking`` request parameter, or None to leave it out.
        stall_timeout: seconds without a stream event before the stream counts as stalled.
        connect_timeout: seconds to open a connection.
        context_window: the model's context in tokens (200,000 when None), against which the
            loop measures when to compact.

    Raises ConfigError for a base URL that is not an http(s) address, or a key or token
    that an HTTP header cannot carry.
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
        self._mask = Redactor(self._secrets).mask  # what the server says, before it is cut to size
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
                    # The events as the server's JSON: the SDK's typed events cost a model built for each
                    # delta, then dumped back to a dict (a fifth of what reading a stream costs).
                    stream = await client.post(
                        "/v1/messages", body=params, cast_to=object, stream=True, stream_cls=sdk.AsyncStream[object]
                    )
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
                    raise not_the_api(url, stream.response.status_code, describe_body(self._mask(content_type)))
                # The body's bytes as they come, not the SDK's events: see ``sse``.
                reader, chunks, status = EventReader(), stream.response.aiter_bytes(), stream.response.status_code
                ended = False
                while not ended:
                    try:
                        async with asyncio.timeout(self.stall_timeout):
                            events = reader.feed(await anext(chunks))
                    except StopAsyncIteration:
                        events, ended = reader.close(), True
                    for event in events:
                        chunk = _take(event, builder, url, status, self._mask)
                        if chunk is not None:
                            yield chunk
                if not builder.started:  # a whole stream, and not one Messages API event in it
                    raise not_the_api(url, stream.response.status_code, "an event stream with no message in it")
        except ProviderError:
            raise
        except TimeoutError:
            raise ProviderError(
                f"the model stream stalled: nothing for {self.stall_timeout:g}s",
                kind="stalled",
                retryable=True,
            ) from None
        except sdk.APIError as err:
            raise await translate_api_error(
                err, sdk, self._model, self.base_url, started=builder.started, mask=self._mask
            ) from None
        except EventTooLarge as err:
            raise ProviderError(
                f"the server's stream does not follow the Messages API ({err}); "
                "check that ANTHROPIC_BASE_URL points at a server that speaks it",
                kind="protocol",
                retryable=False,
            ) from None
        except broken_stream_errors() as err:
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


def _take(
    event: ServerSentEvent, builder: MessageBuilder, url: str, status: int, mask: Callable[[str], str]
) -> ModelChunk | None:
    """Give one server-sent event to ``builder``: what it makes of it, if anything.

    As the SDK reads a stream: an unnamed event, a ping or one without data is skipped; an ``error`` event
    is the server's error (see ``api_errors.stream_error``); data that is not JSON is a broken stream (a
    ValueError); JSON that is not the Messages API's is a setup error, raised at once."""
    if event.event is None or event.event == "ping":
        return None
    if event.event == "error":
        raise stream_error(event.data, mask)
    if not event.data:
        return None
    data = json.loads(event.data)
    try:
        # The server's values are checked here (usage counts may be any JSON at all).
        if not isinstance(data, dict):
            raise TypeError(f"an event that is a JSON {type(data).__name__}, not an object")
        if not builder.started and data.get("type") != "message_start":
            raise not_the_api(url, status, "an event stream that does not begin with message_start")
        return builder.feed(data)
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        # Asking again will not change the server's dialect: fail at once.
        fault = str(err) if isinstance(err, StreamBroken) else f"{type(err).__name__}: {err}"
        raise ProviderError(
            f"the server's stream does not follow the Messages API ({fault}); "
            "check that ANTHROPIC_BASE_URL points at a server that speaks it",
            kind="protocol",
            retryable=False,
        ) from None


def _import_sdk() -> Any:
    import anthropic

    return anthropic
