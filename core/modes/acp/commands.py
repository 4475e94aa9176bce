"""Provides the slash commands an ACP client offers the person (``available_commands_update``) and what they do.

``/plan TASK`` runs TASK with the plan strategy (a turn like any other, the plan asked about); ``/compact
[FOCUS]`` summarizes the older part of the conversation; ``/checkpoint [NAME]`` names the point the session
is at (``checkpoint-N`` when no name is given), its files pinned; ``/loop NAME`` and ``/model NAME`` choose
the strategy and the model of the next runs. A prompt that is one of these never reaches the model, and
neither does one that looks like a command Chimera does not have: it is answered with the commands there are.
Each answer is one line, said to the person as the agent's message.
"""

from __future__ import annotations

import re

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.option_names import LOOPS
from chimera.core.providers.factory import known_model
from chimera.core.sessions.session import Session
from chimera.core.wording import describe_compaction

__all__ = ["AVAILABLE", "NAMES", "parse", "run_command"]


def _command(name: str, description: str, hint: str) -> AvailableCommand:
    return AvailableCommand(
        name=name, description=description, input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint))
    )


AVAILABLE = [
    _command("plan", "Plan the task first (plan and execute): the plan is asked about before any change", "TASK"),
    _command("compact", "Summarize the older part of the conversation now, attending to FOCUS", "[FOCUS]"),
    _command("checkpoint", "Name the point the session is at, its files pinned as they are now", "[NAME]"),
    _command("loop", f"Choose the strategy of the next runs: {', '.join(LOOPS)}", "NAME"),
    _command("model", "Choose the model of the next runs", "NAME"),
]
NAMES = tuple(command.name for command in AVAILABLE)
_FORM = re.compile(r"/([A-Za-z][\w-]*)(?:\s+(.*))?", re.DOTALL)


def parse(text: str) -> tuple[str, str] | None:
    """``(name, argument)`` when ``text`` is written as a command (``/name`` first, then its argument); None
    for anything else (``/usr/bin/env fails`` is a task)."""
    found = _FORM.fullmatch(text.strip())
    return (found.group(1), (found.group(2) or "").strip()) if found else None


async def run_command(session: Session, name: str, argument: str) -> str:
    """Do command ``name`` (not ``plan``: that is a turn) with ``argument``; the line that says what happened."""
    try:
        match name:
            case "compact":
                done = await session.compact(argument)
                if done is None:
                    return "Nothing to compact: the conversation is still short."
                return describe_compaction(done.reason, done.tokens_before, done.tokens_after).capitalize() + "."
            case "checkpoint":
                if session.store.tree.leaf is None:
                    return "/checkpoint: there is nothing to name yet: give Chimera a task first."
                label = argument or _free_name(session)
                named = session.checkpoint(label)
                pinned = ", its files pinned" if named.snapshot else ""
                return f"Checkpoint {label} names node {named.node}{pinned}."
            case "loop":
                if not argument:
                    return f"/loop needs a strategy: one of {', '.join(LOOPS)}."
                session.configure(loop=argument)
                return f"The next runs use the strategy {argument}."
            case "model":
                if not argument:
                    return f"/model needs a model's name (the runs use {session.model} now)."
                before = session.model
                session.configure(model=argument)
                if known_model(argument):
                    return f"The next runs use the model {argument}."
                return (
                    f"{argument} is not a model Chimera knows (its cost is not counted): the next runs use it anyway; "
                    f"/model {before} goes back."
                )
    except ConfigError as err:
        return f"/{name}: {err}"
    except ChimeraError as err:
        return f"/{name} failed: {err}"
    known = ", ".join(f"/{n}" for n in NAMES)
    return f"/{name} is not a command here: the commands are {known} (words that begin with / never reach the model)."


def _free_name(session: Session) -> str:
    taken = set(session.store.tree.names)
    n = 1
    while f"checkpoint-{n}" in taken:
        n += 1
    return f"checkpoint-{n}"
