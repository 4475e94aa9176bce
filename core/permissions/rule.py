"""Provides ``Rule``: one permission rule, ``tool`` or ``tool(pattern)``, ``written``, how a rule is written for
a person (the one spelling Chimera shows and stores, as ``--allow`` takes it), and ``subject_of``, what its
pattern is matched against in a call.

A rule is read in that spelling, and also as ``tool: pattern`` (how Chimera once showed the rules "always"
kept, so words copied from then still work: ``bash: make test`` is ``bash(make test)``, ``read: every call``
is ``read``).

A ``bash`` rule's pattern is a command pattern (``rules.py`` says how it meets parsed commands); any other
tool's is a path pattern, matched against the call's path taken relative to the workspace with ``.``, ``..``
and links resolved. A deny rule on ``read`` also covers ``edit`` (its answers tell what the file holds); on
``write`` or ``edit``, both. A rule holding a character that is not what it looks like is refused where it
is parsed (``rule_text.py``).
"""

from __future__ import annotations

import difflib
import posixpath
import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from chimera.core.errors import ConfigError, WorkspaceError
from chimera.core.permissions.rule_text import disguised
from chimera.core.tools.paths import resolve_in_workspace

if TYPE_CHECKING:  # imported on first use: `chimera --help` needs no parser
    from chimera.core.permissions.rules import CommandPattern

__all__ = ["EDIT_TOOLS", "Rule", "normal_path", "normal_pattern", "subject_of", "written"]

EDIT_TOOLS = frozenset({"write", "edit"})
# A path rule on one tool also covers these: edit reads the file (its answers tell what it holds), and
# write and edit both change it. read's cover of grep and glob is in the policy (_search_refusal, withheld).
_FAMILY = {"read": frozenset({"read", "edit"}), "write": EDIT_TOOLS, "edit": EDIT_TOOLS}
_RULE = re.compile(r"^\s*(\*|[A-Za-z_][\w-]*(?:__\*)?)\s*(?:\((.*)\))?\s*$", re.DOTALL)
# An MCP server's tools, as the model names them: every tool of a server (mcp__db, mcp__db__*) or one (mcp__db__query).
_MCP = re.compile(r"mcp__(?P<server>[A-Za-z0-9_-]+?)(?:__(?P<tool>\*|[A-Za-z0-9_-]+))?")
_COLON = re.compile(r"^\s*(\*|[A-Za-z_][\w-]*)\s*:\s*(\S.*?)\s*$", re.DOTALL)  # the older spelling, tool: pattern
_EVERY = frozenset({"every call", "every file"})  # the older spelling's words for a rule with no pattern


def written(tool: str, pattern: str | None = None) -> str:
    """A rule as Chimera writes it for a person, and as ``--allow`` takes it: ``tool`` or ``tool(pattern)``."""
    return tool if pattern is None else f"{tool}({pattern})"


def subject_of(tool: str, args: dict[str, Any], workspace: Path | None = None) -> str:
    """What a rule's pattern is matched against: the call's path (normalized), else its pattern or command."""
    if tool == "bash":
        return str(args.get("command", ""))
    if tool.startswith("mcp__"):  # an MCP tool's rule names the tool alone: its arguments are the server's own
        return ""
    if "path" in args:
        return normal_path(str(args["path"]), workspace)
    return str(args.get("pattern", ""))


def normal_path(path: str, workspace: Path | None) -> str:
    """``path`` relative to ``workspace`` with links and ``..`` resolved; outside it, tidied lexically."""
    if workspace is not None:
        try:
            resolved = resolve_in_workspace(workspace, path)
        except WorkspaceError:
            pass
        else:
            return resolved.relative_to(workspace).as_posix()
    return re.sub(r"^/+", "/", posixpath.normpath(path)) if path else path


def normal_pattern(pattern: str, workspace: Path | None) -> str:
    """A path rule's pattern tidied like the paths it is matched against (wildcards kept as they are)."""
    if workspace is not None and pattern.startswith(str(workspace) + "/"):
        pattern = pattern[len(str(workspace)) + 1 :]
    return posixpath.normpath(pattern) if pattern else pattern


@dataclass(frozen=True, slots=True)
class Rule:
    """``tool`` or ``tool(pattern)``: a command pattern for ``bash``, a path pattern for the others."""

    tool: str
    pattern: str | None = None

    @classmethod
    def parse(cls, text: str, tools: Collection[str] | None = None) -> Rule:
        """The rule ``text`` spells; with ``tools``, its tool must be one of them (or ``*``). Raises ConfigError.

        A rule holding a character that is not what it looks like (``rule_text.py``) is refused, naming it.
        """
        odd = disguised(text)
        if odd:
            raise ConfigError(
                f"the permission rule {text!r} holds {odd}: the rule would match that character, not what it "
                "looks like; type it again with plain characters"
            )
        match = _RULE.match(text) or _COLON.match(text)
        if match is None:
            raise ConfigError(f"the permission rule {text!r} is not understood: write tool or tool(pattern)")
        tool, pattern = match.group(1), match.group(2)
        if match.re is _COLON and pattern in _EVERY:
            pattern = None
        if tool.startswith("mcp__"):
            return _mcp_rule(text, tool, pattern)
        if tools is not None and tool != "*" and tool not in tools:
            near = difflib.get_close_matches(tool, list(tools), n=1, cutoff=0.5)
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise ConfigError(
                f"the permission rule {text!r} names no tool Chimera has: {hint}"
                f"(the tools are {', '.join(tools)}, or * for all)"
            )
        rule = cls(tool, pattern.strip() if pattern is not None else None)
        if tool == "bash" and rule.pattern is not None and rule.command is None:
            raise ConfigError(
                f"the permission rule {text!r} is not understood: a bash pattern is one command of words and "
                "wildcards, such as bash(git status *), with no chain, redirection or $-expansion"
            )
        if tool == "bash" and rule.pattern is not None:
            from chimera.core.permissions.rules import pattern_problem

            problem = pattern_problem(rule.pattern)
            if problem:
                raise ConfigError(f"the permission rule {text!r} would never match as meant: {problem}")
        return rule

    @property
    def command(self) -> CommandPattern | None:
        """The pattern as a command pattern (None when it is not one)."""
        from chimera.core.permissions.rules import command_pattern

        return None if self.pattern is None else command_pattern(self.pattern)

    def names(self, tool: str) -> bool:
        """Whether this rule is about ``tool`` (``*``: every tool; ``mcp__db`` or ``mcp__db__*``: each of that MCP
        server's tools)."""
        if self.tool in (tool, "*"):
            return True
        server = _MCP.fullmatch(self.tool)
        return server is not None and server["tool"] in (None, "*") and tool.startswith(f"mcp__{server['server']}__")

    def covers(self, tool: str) -> bool:
        """Whether this rule, as a deny rule, applies to ``tool`` (a rule on read also covers edit; on write or
        edit, both)."""
        return self.names(tool) or tool in _FAMILY.get(self.tool, ())

    def denies_path(self, path: str, workspace: Path | None) -> bool:
        """Whether this rule's pattern covers the normalized ``path`` or a folder above it."""
        from chimera.core.permissions.rules import path_matches

        return self.pattern is None or path_matches(path, normal_pattern(self.pattern, workspace), inside=True)

    def allows_path(self, path: str, workspace: Path | None) -> bool:
        from chimera.core.permissions.rules import path_matches

        return self.pattern is None or path_matches(path, normal_pattern(self.pattern, workspace))

    def __str__(self) -> str:
        return written(self.tool, self.pattern)


def _mcp_rule(text: str, tool: str, pattern: str | None) -> Rule:
    """A rule about MCP tools: taken by its shape, since a server's tools are known only once it has started."""
    if _MCP.fullmatch(tool) is None:
        raise ConfigError(
            f"the permission rule {text!r} is not understood: an MCP rule is mcp__SERVER (every tool of the "
            "server), mcp__SERVER__* (the same) or mcp__SERVER__TOOL, as the model names the tools"
        )
    if pattern is not None:
        raise ConfigError(
            f"the permission rule {text!r} has a pattern, which an MCP tool's rule does not take: write {tool}"
        )
    return Rule(tool)
