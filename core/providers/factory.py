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

from chimera.core import credentials
from chimera.core.errors import ConfigError
from chimera.core.providers.anthropic import AnthropicProvider
from chimera.core.providers.choice import (
    DEFAULT_MODEL,
    context_window_setting,
    model_configured,
    resolve_model,
    thinking_setting,
)
from chimera.core.providers.pricing import price_for

__all__ = [
    "DEFAULT_MODEL",
    "create_provider",
    "known_model",
    "model_configured",
    "resolve_model",
    "thinking_setting",
]


def known_model(name: str) -> bool:
    """Whether Chimera knows the model ``name``: the default, or one of a family it has prices for (so its cost
    is counted). Any other name may still be real (a local server's model), or a slip of the keys."""
    return name == DEFAULT_MODEL or price_for(name) is not None


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
