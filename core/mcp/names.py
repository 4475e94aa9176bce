"""Provides ``model_names``: the names the model sees for the tools of MCP servers.

A server's tool ``query`` on the server ``db`` is offered as ``mcp__db__query``. The
Messages API takes tool names of ``[A-Za-z0-9_-]`` up to 64 characters, so every other
character becomes ``_``, and a name that is too long, that two tools would share once
cleaned (``a.b`` and ``a_b``), or that a built-in tool already has, is cut and ends in
a short hash of the server's and the tool's own names instead. The names depend only on
the set of tools, not on the order servers answered in, so a session's recorded calls
name the same tools the next time it opens.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Collection, Iterable

__all__ = ["LONGEST", "PREFIX", "model_names", "server_part"]

PREFIX = "mcp"
LONGEST = 64  # the Messages API's limit on a tool's name
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")
_HASHED = 8  # hex digits of the hash a cut or clashing name ends in (more only if two hashes clash)

Tool = tuple[str, str]  # (server, the tool's own name)


def model_names(tools: Iterable[Tool], builtin: Collection[str]) -> dict[Tool, str]:
    """The model's name for each (server, tool): unique, never a built-in's, within the API's alphabet and length."""
    wanted = sorted(set(tools))
    plain = {tool: _plain(*tool) for tool in wanted}
    counts = Counter(plain.values())
    names: dict[Tool, str] = {}
    for tool in wanted:
        name = plain[tool]
        if len(name) <= LONGEST and counts[name] == 1 and name not in builtin:
            names[tool] = name
    taken = set(names.values()) | set(builtin)
    for tool in wanted:
        if tool not in names:
            names[tool] = _hashed(tool, plain[tool], taken)
            taken.add(names[tool])
    return names


def server_part(server: str) -> str:
    """A server's name as it shows in its tools' names (``mcp__SERVER__TOOL``) and in rules."""
    return _clean(server)


def _plain(server: str, tool: str) -> str:
    return f"{PREFIX}__{_clean(server)}__{_clean(tool)}"


def _clean(part: str) -> str:
    return _NOT_ALLOWED.sub("_", part) or "_"


def _hashed(tool: Tool, plain: str, taken: set[str]) -> str:
    """``plain`` cut to leave room for ``_`` and a hash of the tool's own names; a longer hash if that is taken."""
    digest = hashlib.sha256("\0".join(tool).encode("utf-8", "surrogatepass")).hexdigest()
    for digits in range(_HASHED, len(digest) + 1):
        name = f"{plain[: LONGEST - digits - 1]}_{digest[:digits]}"
        if name not in taken:
            return name
    raise ValueError(f"no free name for the MCP tool {tool!r}")  # 2^256 clashes: never
