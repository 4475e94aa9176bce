"""Provides what the loop makes of one batch of tool calls and one answer, as messages and facts.

``results_message`` is the user message that answers a batch (results, then any
reminders); ``written`` and ``folders_made`` say what Chimera's own ``write``
and ``edit`` changed in it (the only changes a switch may treat as the
agent's); ``sendable`` is an answer as it can go back to the model.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from chimera.core.messages import reminder_block
from chimera.core.providers.base import Message
from chimera.core.strict_json import TOO_DEEP
from chimera.core.tools.executor import ToolOutcome

__all__ = ["folders_made", "results_message", "sendable", "written"]

_FILE_WRITERS = frozenset({"write", "edit"})  # Chimera's own tools that say which file they wrote


def results_message(outcomes: Iterable[ToolOutcome], notes: Iterable[str] = ()) -> Message:
    """The user message that answers a batch: each call's result, then ``notes`` as reminders."""
    return {"role": "user", "content": [o.block() for o in outcomes] + [reminder_block(text) for text in notes]}


def written(outcomes: Iterable[ToolOutcome]) -> dict[str, bool]:
    """The paths Chimera's ``write``/``edit`` wrote in these calls, each True when ``write`` created it.

    A file that appears while any other call runs (``bash``) may be the person's: it is not here.
    """
    wrote: dict[str, bool] = {}
    for outcome in outcomes:
        path = outcome.result.data.get("path")
        if outcome.call.name in _FILE_WRITERS and not outcome.result.is_error and isinstance(path, str):
            wrote[path] = wrote.get(path, False) or outcome.result.data.get("created") is True
    return wrote


def folders_made(outcomes: Iterable[ToolOutcome]) -> list[str]:
    """The folders Chimera's ``write`` made in these calls (a switch may remove them once they are empty)."""
    folders: list[str] = []
    for outcome in outcomes:
        made = outcome.result.data.get("folders")
        if outcome.call.name == "write" and not outcome.result.is_error and isinstance(made, list):
            folders += [f for f in made if isinstance(f, str) and f not in folders]
    return folders


def sendable(message: Message) -> Message:
    """The message as it can go back to the model: tool inputs are objects, content is never empty."""
    content: list[dict[str, Any]] = []
    for block in message.get("content", []):
        if block.get("type") == "tool_use" and not _is_plain_input(block.get("input")):
            block = {**block, "input": {}}
        content.append(block)
    if not content:
        content.append({"type": "text", "text": "(no answer)"})
    return {"role": "assistant", "content": content}


def _is_plain_input(value: object) -> bool:
    return isinstance(value, dict) and "__invalid_json__" not in value and TOO_DEEP not in value
