"""Provides what the workbench's tests share: the screen as text, the conversation's entries, typing a task,
and waiting (bounded) for something to show."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from chimera.tui.state import Entry

__all__ = ["entries", "said", "screen_text", "send", "until"]


def screen_text(app: object) -> str:
    """Everything the screen shows right now, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())  # type: ignore[attr-defined]


def entries(app: object, kind: str) -> list[Entry]:
    """The conversation's entries of ``kind`` (``user``, ``text``, ``tool``, ``notice``…), in order."""
    return [e for e in app.transcript.entries if e.kind == kind]  # type: ignore[attr-defined]


def said(app: object) -> list[str]:
    """What the person said, as the conversation shows it."""
    return [e.text for e in entries(app, "user")]


async def until(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    """Let the app process messages until ``condition`` holds (bounded, so a failure cannot hang)."""
    for _ in range(2000):
        if condition():
            return
        await pilot.pause(0.005)
    raise AssertionError(f"never happened: {what}")


async def send(pilot: Pilot[Any], task: str) -> None:
    """Type ``task`` into the input and press enter."""
    await pilot.click("#prompt")
    await pilot.press(*task, "enter")
