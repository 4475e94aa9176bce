"""Provides ``Kept``: what one "always" answer added to a session's permissions, so it can be shown and taken back,
and ``always_words``: what an "always" to a call lets run unasked, in words a question shows before the answer.

An answer adds allow rules (every edit, every call of a tool, or the rule the person wrote), or exact
(tool, command or path) pairs; ``words`` says which in a line a person reads, written as rules are written
everywhere (``rule.written``: ``bash(make test)``, ``edit, write``, ``read``), as ``--allow`` takes them.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Generic, Protocol, TypeVar

from chimera.core.permissions.rule import EDIT_TOOLS, written

__all__ = ["Kept", "KeptRule", "always_words"]


def always_words(tool: str, args: Mapping[str, Any], *, one_file: bool = False) -> str:
    """What "always" to a call of ``tool`` with ``args`` lets run unasked, written as rules are: this exact
    command (``bash(make test)``); for ``write`` and ``edit``, both tools on every file (``edit, write``), or,
    when ``one_file`` (a file asked about for what it is: inside a git directory, or Chimera's own state), on
    that file alone (``edit(.git/config), write(.git/config)``, wildcards in its name escaped as ``--allow``
    needs them); for any other tool, its every call (``read``).

    ``PermissionPolicy.remembering`` keeps what these words say, and a question shows them before the answer.
    """
    if tool == "bash":
        return written("bash", str(args.get("command", "")).strip())
    if tool in EDIT_TOOLS:
        path = glob.escape(str(args.get("path", ""))) if one_file else None
        return ", ".join(written(edit, path) for edit in sorted(EDIT_TOOLS))
    return written(tool)


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
