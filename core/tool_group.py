"""Provides ``ToolGroup``, the set of tools a run offers, and ``DEFAULT_TOOLS``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
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
    """Tools by name, in the order they were given; then, with ``extra``, the tools it gives at each look (the
    tools of MCP servers, which come and go with the servers), under names none of the others has. ``renew``,
    awaited before each model request (:meth:`renewed`), brings the extra tools up to date."""

    def __init__(
        self,
        tools: Iterable[Tool],
        extra: Callable[[], Iterable[Tool]] | None = None,
        renew: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            if tool.name in self._tools:
                raise ValueError(f"two tools are named {tool.name!r}")
            self._tools[tool.name] = tool
        self._extra = extra
        self._renew = renew

    async def renewed(self) -> None:
        """Bring the extra tools up to date (a server said its list changed); nothing when there are none."""
        if self._renew is not None:
            await self._renew()

    def _all(self) -> dict[str, Tool]:
        if self._extra is None:
            return self._tools
        return {**{t.name: t for t in self._extra() if t.name not in self._tools}, **self._tools}

    def __iter__(self) -> Iterator[Tool]:
        if self._extra is None:
            return iter(self._tools.values())
        return iter([*self._tools.values(), *(t for t in self._extra() if t.name not in self._tools)])

    def __contains__(self, name: object) -> bool:
        return name in self._all()

    def __len__(self) -> int:
        return len(self._all())

    def get(self, name: str) -> Tool | None:
        return self._all().get(name)

    @property
    def names(self) -> list[str]:
        return [t.name for t in self]

    def only(self, predicate: Any) -> ToolGroup:
        """The tools for which ``predicate(tool)`` is true, as they are now."""
        return ToolGroup(t for t in self if predicate(t))

    def without(self, *names: str) -> ToolGroup:
        """These tools but those named; the extra tools still looked up at each use."""
        extra = self._extra
        rest = None if extra is None else (lambda: [t for t in extra() if t.name not in names])
        return ToolGroup((t for t in self._tools.values() if t.name not in names), rest, self._renew)

    def with_extra(
        self, extra: Callable[[], Iterable[Tool]], renew: Callable[[], Awaitable[None]] | None = None
    ) -> ToolGroup:
        """These tools, then those ``extra`` gives at each look, brought up to date by ``renew``."""
        return ToolGroup(self._tools.values(), extra, renew)

    def schemas(self) -> list[dict[str, Any]]:
        """The tool definitions sent to the model."""
        return [{"name": t.name, "description": t.description, "input_schema": t.input_schema} for t in self]


DEFAULT_TOOLS = ToolGroup([Read(), Write(), Edit(), Glob(), Grep(), Bash(), Think()])
READ_ONLY_TOOLS = DEFAULT_TOOLS.only(lambda t: t.read_only)
