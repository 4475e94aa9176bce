"""Provides the model's settings read from the environment, without the provider: whether a model is
configured (``model_configured``), its name (``resolve_model``, ``DEFAULT_MODEL``), and ``CHIMERA_THINKING`` and
``CHIMERA_CONTEXT_WINDOW`` parsed (``thinking_setting``, ``context_window_setting``).

Light on purpose: the workbench reads these for its first frame, before the provider (``factory``) loads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from chimera.core import credentials
from chimera.core.errors import ConfigError

__all__ = ["DEFAULT_MODEL", "context_window_setting", "model_configured", "resolve_model", "thinking_setting"]

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
