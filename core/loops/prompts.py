"""Provides the system prompt: who the agent is, where it works, its rules and its context.

:func:`system_prompt` puts it together; :func:`workspace_prompt` gathers the
context first (the git snapshot and the project's instructions, see
``loops.workspace_facts``).
"""

from __future__ import annotations

import datetime as dt
import platform
from collections.abc import Callable
from pathlib import Path

from chimera.core.gitsafe import GitStop
from chimera.core.loops.reminders import REMINDERS
from chimera.core.loops.workspace_facts import SnapshotUnavailable, git_snapshot, project_instructions

__all__ = ["system_prompt", "workspace_prompt"]

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


def workspace_prompt(
    workdir: Path, *, tools: list[str], stop: GitStop, mask: Callable[[str], str] = str
) -> tuple[str, str | None]:
    """The system prompt for a run in ``workdir`` offering ``tools``, with the git snapshot and the
    project's instructions (``mask`` applied to them before they are cut to size); and what to tell
    the person when the snapshot is unavailable (nothing when ``stop`` cut it short: the prompt is
    then built again at the next run).
    """
    note = None
    try:
        git = git_snapshot(workdir, stop=stop)
    except SnapshotUnavailable as err:
        if not stop.stopped:
            note = f"the git snapshot is unavailable: {err}"
        git = "The git snapshot is unavailable: git did not answer in time, so branch and status are unknown."
    return system_prompt(workdir, tools=tools, git=git, instructions=project_instructions(workdir, mask)), note
