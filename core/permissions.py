"""Provides ``PermissionPolicy``: whether a tool call may run, must be asked about, or is refused.

Modes: ``ask`` (read-only calls run, the rest are asked about), ``accept-edits``
(file edits run too, commands are asked about), ``plan`` (read-only: every
call that can change something is refused, whatever the model sends) and
``bypass`` (everything runs). Rules refine a mode: ``allow`` and ``deny``
lists of ``tool`` or ``tool(pattern)``, such as ``bash(git status*)`` or
``edit(src/**)``. A deny rule always wins; plan mode cannot be loosened by an
allow rule.

Calls and patterns are both normalized, so spelling either differently does
not change the verdict: a path is taken relative to the workspace with ``.``,
``..`` and links resolved (``./.env``, ``sub/../.env`` and an absolute path to
it are all ``.env``), and a command has its runs of spaces and tabs collapsed
(newlines stay: they chain commands). An allow rule matches the normalized call
only, and never covers commands chained onto the one it names. A deny rule
matches the call as written or normalized, and a command inside a chain
(``true; rm -rf x``). Commands are not parsed as a shell would (``sh -c '…'``
or ``eval`` can still hide one), so a deny rule for ``bash`` is a guard rail;
``plan`` mode is the hard line.
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
_BLANKS = re.compile(r"[ \t]+")
_RULE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)

Verdict = Literal["allow", "ask", "deny"]


def subject_of(tool: str, args: dict[str, Any], workspace: Path | None = None) -> str:
    """What a rule's pattern is matched against: a command, or a path or pattern, normalized.

    A path is made relative to ``workspace`` (links and ``..`` resolved) when it lies
    inside it; without a workspace, or outside it, it is only tidied lexically.
    """
    if tool == "bash":
        return _tidy_command(str(args.get("command", "")))
    if "path" in args:
        return _normal_path(str(args["path"]), workspace)
    return str(args.get("pattern", ""))


def _written(tool: str, args: dict[str, Any]) -> str:
    """The subject as the model wrote it."""
    key = "command" if tool == "bash" else "path" if "path" in args else "pattern"
    return str(args.get(key, ""))


def _tidy_command(command: str) -> str:
    return "\n".join(_BLANKS.sub(" ", line).strip() for line in command.strip().splitlines())


def _normal_path(path: str, workspace: Path | None) -> str:
    if workspace is not None:
        try:
            resolved = resolve_in_workspace(workspace, path)
        except WorkspaceError:
            pass
        else:
            return resolved.relative_to(workspace).as_posix()
    return posixpath.normpath(path) if path else path


def _normal_pattern(tool: str, pattern: str, workspace: Path | None) -> str:
    """A rule's pattern tidied like the calls it is matched against (wildcards kept as they are)."""
    if tool == "bash":
        return _tidy_command(pattern)
    if workspace is not None and pattern.startswith(str(workspace) + "/"):
        pattern = pattern[len(str(workspace)) + 1 :]
    return posixpath.normpath(pattern) if pattern else pattern


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

    def matches(self, tool: str, subject: str, workspace: Path | None = None) -> bool:
        """Whether this rule names ``tool`` and its normalized pattern (if any) matches the normalized ``subject``."""
        if self.tool != tool and self.tool != "*":
            return False
        return self.pattern is None or fnmatch.fnmatchcase(subject, _normal_pattern(tool, self.pattern, workspace))

    def denies(self, tool: str, subjects: tuple[str, ...], workspace: Path | None = None) -> bool:
        """Whether any spelling in ``subjects`` (normalized, as written), or a command chained in one, matches."""
        if self.tool != tool and self.tool != "*":
            return False
        if self.pattern is None:
            return True
        patterns = {self.pattern, _normal_pattern(tool, self.pattern, workspace)}
        candidates = set(subjects)
        if tool == "bash":
            candidates.update(part for subject in subjects for part in _segments(subject))
        return any(fnmatch.fnmatchcase(s, p) for s in candidates for p in patterns)

    def allows(self, tool: str, subject: str, workspace: Path | None = None) -> bool:
        """Like ``matches``, but a command pattern never covers other commands chained onto the one it names."""
        if not self.matches(tool, subject, workspace):
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
        spellings = (subject, _written(tool, args))
        for rule in self.deny:
            if rule.denies(tool, spellings, workspace):
                return Decision("deny", f"{tool} is denied by the rule {rule}")
        if self.mode == "plan" and not read_only:
            return Decision("deny", f"plan mode is read-only: {tool} may change files, so it does not run")
        if read_only or self.mode == "bypass":
            return Decision("allow")
        for rule in self.allow:
            if rule.allows(tool, subject, workspace):
                return Decision("allow", f"allowed by the rule {rule}")
        if self.mode == "accept-edits" and tool in _EDIT_TOOLS:
            return Decision("allow")
        return Decision("ask")
