"""Provides the one root exception of Chimera and its family.

Every error carries a message a person can act on: the cause and the fix, on
one line. Command-line front ends print ``str(error)`` and nothing else.
"""

from __future__ import annotations

CONFIG_KINDS = frozenset({"auth", "not_found", "permission", "unreachable", "protocol"})
"""Provider failures whose fix is in the setup (key, model, URL, a server that speaks the API), not in waiting."""

REFUSED_KINDS = frozenset({"bad_request", "prompt_too_long", "auth", "permission", "not_found", "encoding"})
"""Provider failures that refuse the request itself (an HTTP 4xx other than a rate limit, or a request that cannot
be encoded): sent again as it is, it fails the same way."""


class ChimeraError(Exception):
    """Root of every error Chimera raises on purpose."""


class ConfigError(ChimeraError):
    """The setup is wrong: a bad flag, a missing folder, a rejected key, an unknown model."""


class ProviderError(ChimeraError):
    """A model request failed.

    ``kind`` names the cause in one word (``rate_limit``, ``overloaded``,
    ``stream_error``, ``incomplete``, ``stalled``, ``connection``, ``server``,
    ``bad_request``, ``auth``, ``not_found``, ``permission``, ``unreachable``,
    ``protocol`` (the server does not speak the Messages API: another kind of
    page or stream, a redirect, a status the API never sends, no HTTP at all), ``encoding`` (the
    request could not be encoded: a bug or bad data, never retried));
    ``retryable`` says whether trying again may help, and ``retry_after`` is
    the server's hint in seconds when it gave one.
    """

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        retryable: bool,
        retry_after: float | None = None,
        status: int | None = None,
    ) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        self.retry_after = retry_after
        self.status = status

    @property
    def is_config(self) -> bool:
        """True when the fix is in the setup (key, model, URL), not in waiting."""
        return self.kind in CONFIG_KINDS


class ToolInputError(ChimeraError):
    """A tool call's arguments do not fit the tool's schema."""


class WorkspaceError(ChimeraError):
    """A path points outside the workspace, or the workspace is not usable."""


class ReplayDiverged(ChimeraError):
    """A replay that re-ran the tools got a result the recording did not have."""


class SessionError(ChimeraError):
    """A session could not be saved (the disk is full, the folder went away) or a record of it read back."""
