"""Provides ``Kept``: what one "always" answer added to a session's permissions, so it can be shown and taken back.

An answer adds allow rules (every edit, every call of a tool, or the rule the person wrote), or exact
(tool, command or path) pairs; ``words`` says which in a line a person reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from chimera.core.permissions.policy import Rule

__all__ = ["Kept"]


@dataclass(frozen=True, slots=True)
class Kept:
    """One "always": the ``rules`` and exact ``approved`` pairs it added, and ``words`` saying what runs unasked."""

    words: str
    rules: tuple[Rule, ...] = ()
    approved: frozenset[tuple[str, str]] = frozenset()
