"""Provides ``create_provider``: the configured model provider, from arguments and the environment.

``ANTHROPIC_API_KEY`` and ``ANTHROPIC_BASE_URL`` choose the server (Anthropic,
or a local one that speaks the Messages API: Ollama, llama.cpp, vLLM,
LiteLLM); ``--model`` or ``CHIMERA_MODEL`` the model; ``CHIMERA_THINKING``
(``adaptive``, a token budget such as ``8000``, or ``off``) native thinking;
``CHIMERA_CONTEXT_WINDOW`` the model's context in tokens (a local server's is often smaller).
With neither a key nor a URL there is no model to talk to, and front ends play
the offline demo instead.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from chimera.core import credentials
from chimera.core.errors import ConfigError
from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.providers.pricing import price_for

__all__ = [
    "DEFAULT_MODEL",
    "create_provider",
    "known_model",
    "model_configured",
    "resolve_model",
    "thinking_setting",
]

DEFAULT_MODEL = "claude-sonnet-5-5"


def model_configured(environ: Mapping[str, str] | None = None) -> bool:
    """True when a key, a token or a base URL says which model server to use (default: this process's)."""
    if environ is None:
        return bool(credentials.values() or os.environ.get("ANTHROPIC_BASE_URL"))
    return bool(
        environ.get("ANTHROPIC_API_KEY") or environ.get("ANTHROPIC_AUTH_TOKEN") or environ.get("ANTHROPIC_BASE_URL")
    )


def resolve_model(model: str | None = None, environ: Mapping[str, str] | None = None) -> str:
    """The model to use: the argument, else ``CHIMERA_MODEL``, else the default Sonnet."""
    env = os.environ if environ is None else environ
    return model or env.get("CHIMERA_MODEL") or DEFAULT_MODEL


def known_model(name: str) -> bool:
    """Whether Chimera knows the model ``name``: the default, or one of a family it has prices for (so its cost
    is counted). Any other name may still be real (a local server's model), or a slip of the keys."""
    return name == DEFAULT_MODEL or price_for(name) is not None


_MAX_TOKENS = 100_000_000  # more than any model's window or budget: a larger number is a slip


def _tokens(text: str) -> int | None:
    """``text`` as a number of tokens (plain digits, from 1,024 to 100 million); None when it is not one."""
    if not (text.isascii() and text.isdigit()) or len(text) > len(str(_MAX_TOKENS)):
        return None
    tokens = int(text)
    return tokens if 1024 <= tokens <= _MAX_TOKENS else None


def thinking_setting(value: str | None) -> dict[str, Any] | None:
    """Parse ``CHIMERA_THINKING`` into the request's ``thinking`` parameter."""
    if value is None or value.strip().lower() in {"", "off", "none", "0"}:
        return None
    text = value.strip().lower()
    if text == "adaptive":
        return {"type": "adaptive"}
    tokens = _tokens(text)
    if tokens is not None:
        return {"type": "enabled", "budget_tokens": tokens}
    raise ConfigError(
        f"CHIMERA_THINKING={value!r} is not understood: use 'adaptive', 'off', or a token budget of at least 1024"
    )


def context_window_setting(value: str | None) -> int | None:
    """Parse ``CHIMERA_CONTEXT_WINDOW`` (the model's context in tokens; the provider's default when unset)."""
    if value is None or not value.strip():
        return None
    tokens = _tokens(value.strip().replace("_", ""))
    if tokens is not None:
        return tokens
    raise ConfigError(
        f"CHIMERA_CONTEXT_WINDOW={value!r} is not a context size: give the model's window in tokens, such as 32768"
    )


def create_provider(
    model: str | None = None,
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    stall_timeout: float = 90.0,
) -> AnthropicProvider:
    """Build the provider for ``model`` against the configured server, the credentials passed explicitly.

    Raises ConfigError when no key and no base URL are set.
    """
    if api_key is None and base_url is None and not model_configured():
        raise ConfigError("no model is configured: set ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL for a local server")
    return AnthropicProvider(
        resolve_model(model),
        api_key=api_key if api_key is not None else credentials.get("ANTHROPIC_API_KEY"),
        auth_token=credentials.get("ANTHROPIC_AUTH_TOKEN"),
        base_url=base_url,
        thinking=thinking_setting(os.environ.get("CHIMERA_THINKING")),
        stall_timeout=stall_timeout,
        context_window=context_window_setting(os.environ.get("CHIMERA_CONTEXT_WINDOW")),
    )
