"""Provides ``PermissionPolicy``: whether a tool call may run, must be asked about, or is refused.

Modes: ``ask`` (read-only calls run, the rest are asked about), ``accept-edits``
(file edits run too, commands are asked about), ``plan`` (read-only: every
call that can change something is refused, whatever the model sends) and
``bypass`` (everything runs). Rules refine a mode: ``allow`` and ``deny``
lists of ``tool`` or ``tool(pattern)``, such as ``bash(git status*)`` or
``edit(src/**)``. A deny rule always wins; plan mode cannot be loosened by an
allow rule.

Patterns match a normalized subject, so spelling a call differently does not
slip past a rule: a path is taken relative to the workspace with ``.``, ``..``
and links resolved (``./.env``, ``sub/../.env`` and an absolute path to it are
all ``.env``), and a command has its runs of whitespace collapsed. A deny rule
for a command also refuses it inside a chain (``true; rm -rf x``), while an
allow rule never covers commands chained onto the one it names. Commands are
not parsed as a shell would (``sh -c '…'`` or ``eval`` can still hide one), so
a deny rule for ``bash`` is a guard rail; ``plan`` mode is the hard line.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from chimera.core.errors import ConfigError, WorkspaceError
from chimera.core.tools.paths import resolve_in_workspace

__all__ = ["MODES", "Decision", "PermissionPolicy", "Rule", "subject_of"]

MODES = ("ask", "accept-edits", "plan", "bypass")
_EDIT_TOOLS = frozenset({"write", "edit"})
_CHAINING = re.compile(r"[;&|`\n]|\$\(|[<>]\(")  # ; && || | & ` $( <( >( and newlines join commands
_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)

Verdict = Literal["allow", "ask", "deny"]


def subject_of(tool: str, args: dict[str, Any], workspace: Path | None = None) -> str:
    """What a rule's pattern is matched against: a command, or a path or pattern, normalized.

    A path is made relative to ``workspace`` (links and ``..`` resolved) when it lies
    inside it; without a workspace, or outside it, it is only tidied lexically.
    """
    if tool == "bash":
        return " ".join(str(args.get("command", "")).split())
    if "path" in args:
        return _normal_path(str(args["path"]), workspace)
    return str(args.get("pattern", ""))


def _normal_path(path: str, workspace: Path | None) -> str:
    if workspace is not None:
        try:
            resolved = resolve_in_workspace(workspace, path)
        except WorkspaceError:
            pass
        else:
            return resolved.relative_to(workspace).as_posix()
    return posixpath.normpath(path) if path else path


def _segments(command: str) -> list[str]:
    """The commands a chain joins (``a; b && c | d $(e)``), each stripped of grouping."""
    parts = (part.strip(" \t(){}") for part in _CHAINING.split(command))
    return [part for part in parts if part]


@dataclass(frozen=True, slots=True)
class Rule:
    """``tool`` or ``tool(pattern)``; the pattern is a shell-style wildcard."""

    tool: str
    pattern: str | None = None

    @classmethod
    def parse(cls, text: str) -> Rule:
        match = _RULE.match(text)
        if match is None:
            raise ConfigError(f"the permission rule {text!r} is not understood: write tool or tool(pattern)")
        pattern = match.group(2)
        return cls(match.group(1), pattern.strip() if pattern is not None else None)

    def matches(self, tool: str, subject: str) -> bool:
        """Whether this rule names ``tool`` and its pattern (if any) matches the normalized ``subject``."""
        if self.tool != tool and self.tool != "*":
            return False
        return self.pattern is None or fnmatch.fnmatchcase(subject, self.pattern)

    def denies(self, tool: str, subject: str) -> bool:
        """Like ``matches``, but a command pattern also catches the command inside a chain."""
        if self.matches(tool, subject):
            return True
        return tool == "bash" and self.pattern is not None and any(self.matches(tool, s) for s in _segments(subject))

    def allows(self, tool: str, subject: str) -> bool:
        """Like ``matches``, but a command pattern never covers other commands chained onto the one it names."""
        if not self.matches(tool, subject):
            return False
        if tool != "bash" or self.pattern is None:
            return True
        return _CHAINING.search(subject) is None or _CHAINING.search(self.pattern) is not None

    def __str__(self) -> str:
        return self.tool if self.pattern is None else f"{self.tool}({self.pattern})"


@dataclass(frozen=True, slots=True)
class Decision:
    verdict: Verdict
    reason: str = ""


@dataclass(frozen=True, slots=True)
class PermissionPolicy:
    """A mode and rules; ``decide`` says what happens to one call."""

    mode: str = "ask"
    allow: tuple[Rule, ...] = field(default_factory=tuple)
    deny: tuple[Rule, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ConfigError(f"the permission mode {self.mode!r} is unknown: use one of {', '.join(MODES)}")

    @classmethod
    def build(cls, mode: str, allow: Iterable[str] = (), deny: Iterable[str] = ()) -> PermissionPolicy:
        return cls(mode, tuple(Rule.parse(r) for r in allow), tuple(Rule.parse(r) for r in deny))

    def decide(self, tool: str, args: dict[str, Any], *, read_only: bool, workspace: Path | None = None) -> Decision:
        """What happens to a call of ``tool`` with ``args``; paths are judged relative to ``workspace``."""
        subject = subject_of(tool, args, workspace)
        for rule in self.deny:
            if rule.denies(tool, subject):
                return Decision("deny", f"{tool} is denied by the rule {rule}")
        if self.mode == "plan" and not read_only:
            return Decision("deny", f"plan mode is read-only: {tool} may change files, so it does not run")
        if read_only or self.mode == "bypass":
            return Decision("allow")
        for rule in self.allow:
            if rule.allows(tool, subject):
                return Decision("allow", f"allowed by the rule {rule}")
        if self.mode == "accept-edits" and tool in _EDIT_TOOLS:
            return Decision("allow")
        return Decision("ask")
