"""Provides what the CLI's session commands print for a person: a safe line, an opened session's warnings."""

from __future__ import annotations

import sys
from typing import TextIO

from chimera.core.sessions.store import SessionStore
from chimera.core.terminal_text import terminal_safe

__all__ = ["line", "warn_opened"]


def line(out: TextIO, text: str) -> None:
    """Write ``text`` as one line, whatever it holds: what could steer a terminal or break the line shows escaped."""
    out.write(terminal_safe(text, one_line=True) + "\n")


def warn_opened(store: SessionStore) -> None:
    """Say what opening the session found damaged (it was skipped, never deleted)."""
    for warning in store.warnings:
        line(sys.stderr, f"chimera: session {store.id}: {warning}")
