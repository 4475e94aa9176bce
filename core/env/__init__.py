"""Provides the environments a run works in: ``Environment`` and ``LocalEnvironment``."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

__all__ = ["Environment"]


class Environment(Protocol):
    """Where tools act: a workspace root, and a place for saved tool output."""

    @property
    def workdir(self) -> Path: ...

    @property
    def spill_dir(self) -> Path: ...
