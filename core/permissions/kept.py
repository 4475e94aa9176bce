"""Provides ``Kept``: what one "always" answer added to a session's permissions, so it can be shown and taken back.

An answer adds allow rules (every edit, every call of a tool, or the rule the person wrote), or exact
(tool, command or path) pairs; ``words`` says which in a line a person reads.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, Protocol, TypeVar

__all__ = ["Kept", "KeptRule"]


class KeptRule(Protocol):
    """What of a ``rule.Rule`` an answer keeps (a protocol: the policy imports this module, not back)."""

    @property
    def tool(self) -> str: ...

    @property
    def pattern(self) -> str | None: ...


R = TypeVar("R", bound=KeptRule)


@dataclass(frozen=True, slots=True)
class Kept(Generic[R]):
    """One "always": the ``rules`` and exact ``approved`` pairs it added, and ``words`` saying what runs unasked."""

    words: str
    rules: tuple[R, ...] = ()
    approved: frozenset[tuple[str, str]] = frozenset()
