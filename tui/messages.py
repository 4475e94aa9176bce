"""Provides the Textual messages the workbench passes around."""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:  # (the events load with the first one: the first frame draws none)
    from chimera.core.events import StepEvent

__all__ = ["BusEvents"]


class BusEvents(Message):
    """Events from the core's bus, batched per frame, in publish order."""

    def __init__(self, events: list[StepEvent]) -> None:
        super().__init__()
        self.events = events
