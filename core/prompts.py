"""Provides the system prompt: who the agent is, where it works, and how it uses tools."""

from __future__ import annotations

import datetime as dt
import platform
from pathlib import Path

__all__ = ["system_prompt"]

_BASE = """\
You are Chimera, a coding agent working in a software project on the user's machine.
Work in small, verified steps: read before you edit, prefer `edit` for changes to
existing files, and run the project's tests after a change. Paths are relative to
the workspace; you cannot reach outside it. Keep answers short and concrete: say
what you changed and how you checked it."""


def system_prompt(workdir: Path, *, tools: list[str], extra: str = "") -> str:
    """Build the system prompt for a run in ``workdir`` offering ``tools``."""
    lines = [
        _BASE,
        "",
        f"Workspace: {workdir}",
        f"Platform: {platform.system()} {platform.release()}",
        f"Date: {dt.date.today().isoformat()}",
        f"Tools: {', '.join(tools)}",
    ]
    if "think" in tools:
        lines.append("Use `think` to reason through a plan or a surprising result before acting.")
    if extra:
        lines += ["", extra]
    return "\n".join(lines)
