"""Provides the ``Tool`` protocol, the context tools run in, and their results."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from chimera.core.redact import Redactor
from chimera.core.terminal_text import flat

if TYPE_CHECKING:  # a type only: the sandbox's modules load with the first command
    from chimera.core.sandbox.policy import Confinement

__all__ = [
    "CALL_STATUSES",
    "DEFAULT_MAX_OUTPUT",
    "Previewing",
    "Tool",
    "ToolContext",
    "ToolResult",
    "describe_call",
    "status_of_text",
]

DEFAULT_MAX_OUTPUT = 20_000

CALL_STATUSES = ("ok", "failed", "refused", "declined", "cancelled", "skipped")
"""How a call ended: it ran (``ok``) or ran and failed, or was malformed (``failed``); a rule, the mode or
plan mode refused it, or nobody could be asked (``refused``); the person said no (``declined``); it was
stopped while it ran or before it began (``cancelled``); the run stopped before it (``skipped``)."""

_LEGACY_PREFIXES = (  # how results said what ended them before they carried a status
    ("Error: not permitted", "refused"),
    ("Error: the person declined", "declined"),
    ("Error: not run:", "skipped"),
    ("Cancelled:", "cancelled"),
)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """What a tool call produced: ``output`` is exactly what the model reads.

    ``data`` carries structured extras for readers (a diff, the path of saved
    full output, an exit code); the model never sees it.
    """

    output: str
    is_error: bool = False
    data: dict[str, Any] = field(default_factory=dict)
    status: str = ""
    """One of :data:`CALL_STATUSES`; empty is ``ok`` or ``failed`` by ``is_error`` (see :attr:`ended`)."""

    @classmethod
    def error(cls, message: str, status: str = "failed") -> ToolResult:
        return cls(output=f"Error: {message}", is_error=True, status=status)

    @property
    def ended(self) -> str:
        """How the call ended (:data:`CALL_STATUSES`)."""
        return self.status or ("failed" if self.is_error else "ok")


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Where and how a tool call runs.

    Args:
        workspace: the resolved workspace root; no tool reaches outside it.
        spill_dir: where full outputs over the cap are saved (readable by ``read``).
        max_output: the cap, in characters, on output the model sees.
        call_id: the id of the call, for naming saved output.
        redactor: the secrets masked in saved output as it is written.
        withheld: whether a deny rule keeps a file (workspace-relative posix path) from the model;
            searches leave such files out.
        on_output: where a tool passes its output while it runs (in order, secrets masked), for the
            person watching; None when nobody watches.
        sandbox: what the processes the call starts are confined to; None: they run unconfined.
    """

    workspace: Path
    spill_dir: Path
    max_output: int = DEFAULT_MAX_OUTPUT
    call_id: str = "call"
    redactor: Redactor = field(default_factory=Redactor)
    withheld: Callable[[str], bool] | None = None
    on_output: Callable[[str], object] | None = None
    sandbox: Confinement | None = None


@runtime_checkable
class Tool(Protocol):
    """A tool the model can call: a name, a JSON schema, and an async ``run``."""

    name: str
    input_schema: dict[str, Any]
    read_only: bool

    @property
    def description(self) -> str:
        """What the model reads of the tool (a tool may word it from what it holds now: ``mcp_search``)."""
        ...

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run with arguments already checked against ``input_schema``."""
        ...


@runtime_checkable
class Previewing(Protocol):
    """A tool that can say what a call would do before it runs (``write``, ``edit``), for the person asked."""

    def preview(self, args: dict[str, Any], workspace: Path) -> str:
        """What the call with ``args`` (checked against the schema) would do in ``workspace`` as it is now, bounded
        in size and time; blocking (run it in a thread). Never raises: a preview that cannot be made says why."""
        ...


def schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """A closed object schema: the named properties and nothing else."""
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


def status_of_text(output: str, is_error: bool) -> str:
    """How a call recorded before results carried a status ended, from the words of its result: the one
    place that reads them, for sessions and logs written by an older Chimera."""
    if not is_error:
        return "ok"
    return next((status for prefix, status in _LEGACY_PREFIXES if output.startswith(prefix)), "failed")


def describe_call(name: str, args: dict[str, Any], width: int = 100) -> str:
    """The argument of a call a person cares about, on one line."""
    for key in ("command", "path", "pattern", "thought"):
        if key in args:
            text = flat(str(args[key]))
            if key == "pattern" and args.get("path"):
                text += f"  in {args['path']}"
            return text if len(text) <= width else text[: width - 1] + "…"
    # Another tool's (an MCP server's): its arguments as NAME=VALUE, each value as JSON writes it.
    text = flat(" ".join(f"{key}={json.dumps(value, ensure_ascii=False)}" for key, value in args.items()))
    return text if len(text) <= width else text[: width - 1] + "…"
