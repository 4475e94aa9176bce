"""Provides the system prompt: who the agent is, where it works, its rules and its context."""

from __future__ import annotations

import datetime as dt
import platform
from pathlib import Path

from chimera.core.loops.reminders import REMINDERS

__all__ = ["system_prompt"]

_BASE = """\
You are Chimera, a coding agent working in a software project on the person's machine.
Work in small, verified steps: read before you edit, prefer `edit` for changes to
existing files, and check your work. Paths are relative to the workspace; you cannot
reach outside it. Keep answers short and concrete: say what you changed and how you
checked it."""


def system_prompt(
    workdir: Path,
    *,
    tools: list[str],
    git: str | None = None,
    instructions: str | None = None,
    extra: str = "",
) -> str:
    """Build the system prompt for a run in ``workdir`` offering ``tools``.

    ``git`` is the repository snapshot and ``instructions`` the project's own
    instruction files, when there are any.
    """
    lines = [
        _BASE,
        "",
        "Rules:",
        *(f"- {reminder.text}" for reminder in REMINDERS),
        "",
        f"Workspace: {workdir}",
        f"Platform: {platform.system()} {platform.release()}",
        f"Date: {dt.date.today().isoformat()}",
        f"Tools: {', '.join(tools)}",
    ]
    if "think" in tools:
        lines.append("Use `think` to reason through a plan or a surprising result before acting.")
    if git:
        lines += ["", "This is the repository as the session started:", git]
    if instructions:
        lines += ["", "The project's instructions (follow them):", instructions]
    if extra:
        lines += ["", extra]
    return "\n".join(lines)
