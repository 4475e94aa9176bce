"""Provides ``ToolGroup``, the set of tools a run offers, and ``DEFAULT_TOOLS``."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from chimera.core.tools.base import Tool
from chimera.core.tools.bash import Bash
from chimera.core.tools.edit import Edit
from chimera.core.tools.glob import Glob
from chimera.core.tools.grep import Grep
from chimera.core.tools.read import Read
from chimera.core.tools.think import Think
from chimera.core.tools.write import Write

__all__ = ["DEFAULT_TOOLS", "READ_ONLY_TOOLS", "ToolGroup"]


class ToolGroup:
    """Tools by name, in the order they were given."""

    def __init__(self, tools: Iterable[Tool]) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def __len__(self) -> int:
        return len(self._tools)

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def only(self, predicate: Any) -> ToolGroup:
        """The tools for which ``predicate(tool)`` is true."""
        return ToolGroup(t for t in self if predicate(t))

    def without(self, *names: str) -> ToolGroup:
        return ToolGroup(t for t in self if t.name not in names)

    def schemas(self) -> list[dict[str, Any]]:
        """The tool definitions sent to the model."""
        return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in self]


DEFAULT_TOOLS = ToolGroup([Read(), Write(), Edit(), Glob(), Grep(), Bash(), Think()])
READ_ONLY_TOOLS = DEFAULT_TOOLS.only(lambda t: t.read_only)
