"""Provides how a tool call shows in an ACP client: its ``kind``, ``title``, ``locations`` and content.

``read`` is a read, ``write`` and ``edit`` are edits (with a ``diff`` of the change), ``glob``, ``grep`` and
``mcp_search`` are searches, ``think`` thinks, and ``bash`` executes, unless the command is one plain ``rm`` (a
delete) or ``curl`` or ``wget`` (a fetch). Every path is absolute, as ACP asks: a path the model gave relative to
the workspace is joined to it. A finished call's output is shown in a fenced block longer than any run of
backticks in it, so nothing the output holds can close the block early.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from acp.helpers import text_block, tool_content, tool_diff_content
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolKind,
)

__all__ = ["Content", "absolute", "content_of", "diff_of", "fenced", "kind_of", "locations_of", "title_of"]

Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

_KINDS: dict[str, ToolKind] = {
    "read": "read",
    "write": "edit",
    "edit": "edit",
    "glob": "search",
    "grep": "search",
    "mcp_search": "search",
    "think": "think",
    "bash": "execute",
}
_DELETES = frozenset({"rm", "rmdir", "unlink"})
_FETCHES = frozenset({"curl", "wget"})
_TITLE = 120  # characters of a command or pattern a title shows


def kind_of(name: str, args: dict[str, Any]) -> ToolKind:
    """The ACP kind of a call of tool ``name`` with ``args`` (``other`` for a tool of an MCP server)."""
    kind = _KINDS.get(name, "other")
    if kind == "execute":
        program = _program(str(args.get("command", "")))
        if program in _DELETES:
            return "delete"
        if program in _FETCHES:
            return "fetch"
    return kind


def _program(command: str) -> str | None:
    """The program a plain, one-command line runs (``rm -rf build`` is ``rm``); None for anything else."""
    try:
        from chimera.core.permissions.shell import parse_line  # (tree-sitter; the policy has loaded it)

        single = parse_line(command).single
    except Exception:  # a line the parser cannot take is shown as a command, which it is
        return None
    return single.layers[-1].name if single is not None else None


def title_of(name: str, args: dict[str, Any]) -> str:
    """What the call does, in a line: ``Read src/app.py``, ``Edit README.md``, ``pytest -q``."""
    path = str(args.get("path", "") or "")
    match name:
        case "read":
            return f"Read {path}"
        case "write":
            return f"Write {path}"
        case "edit":
            return f"Edit {path}"
        case "glob":
            return f"Find {_cut(str(args.get('pattern', '')))}" + (f" in {path}" if path else "")
        case "grep":
            return f"Search for {_cut(str(args.get('pattern', '')))}" + (f" in {path}" if path else "")
        case "bash":
            return _cut(" ".join(str(args.get("command", "")).split())) or "bash"
        case "think":
            return "Think"
    server, _, tool = name.removeprefix("mcp__").partition("__")
    return f"{server}: {tool}" if name.startswith("mcp__") and tool else name


def _cut(text: str) -> str:
    return text if len(text) <= _TITLE else text[: _TITLE - 1] + "…"


def absolute(workdir: Path, path: str) -> str:
    """``path`` as the absolute path it names: joined to ``workdir`` when relative, ``..`` folded."""
    return os.path.normpath(os.path.join(workdir, os.path.expanduser(path) if path.startswith("~") else path))


def locations_of(workdir: Path, name: str, args: dict[str, Any]) -> list[ToolCallLocation]:
    """The files a call reads or changes (a search: the folder it searches), as absolute paths."""
    path = args.get("path")
    if name in ("read", "write", "edit") and isinstance(path, str) and path:
        offset = args.get("offset") if name == "read" else None
        line = offset if isinstance(offset, int) and not isinstance(offset, bool) and offset >= 1 else None
        return [ToolCallLocation(path=absolute(workdir, path), line=line)]
    if name in ("glob", "grep"):
        return [ToolCallLocation(path=absolute(workdir, path) if isinstance(path, str) and path else str(workdir))]
    return []


def diff_of(workdir: Path, name: str, args: dict[str, Any]) -> list[Content]:
    """The change a ``write`` or ``edit`` makes, as ACP's ``diff``: an edit's old and new text, a write's new
    content (its old text unknown: ``oldText`` is left out); none for another tool."""
    path, new = args.get("path"), args.get("new" if name == "edit" else "content")
    if name not in ("write", "edit") or not isinstance(path, str) or not isinstance(new, str):
        return []
    old = args.get("old") if name == "edit" else None
    return [tool_diff_content(absolute(workdir, path), new, old if isinstance(old, str) else None)]


def fenced(text: str) -> str:
    """``text`` in a Markdown code block whose fence is longer than any run of backticks inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}{'' if text.endswith(chr(10)) else chr(10)}{fence}"


def content_of(workdir: Path, name: str, args: dict[str, Any], output: str, *, failed: bool) -> list[Content]:
    """What a finished call shows: an edit that worked, its diff; anything else, its output as the model saw it."""
    if not failed and name in ("write", "edit"):
        return diff_of(workdir, name, args)
    if not output:
        return []
    return [tool_content(text_block(fenced(output)))]
