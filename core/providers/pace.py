"""Provides ``Pace``: how fast a replay plays, and the pause a person holds and steps through.

A replay is told in recorded turns (one assistant message, then its recorded
tool results). The provider asks :meth:`Pace.turn` before it plays a turn and
:meth:`Pace.wait` between the pieces it streams; both hold while paused. A
*step* lets one turn through at once and pauses again before the next. Speed
is a factor of recorded time: 1 plays the model's turns as long as they took,
10 ten times faster, ``math.inf`` at once. A change (pause, step, speed) takes
effect in the wait going on, not after it.
"""

from __future__ import annotations

import asyncio
import math

__all__ = ["INSTANT", "SPEEDS", "Pace"]

INSTANT = math.inf
SPEEDS = (1.0, 10.0, INSTANT)  # what the workbench offers


class Pace:
    """A replay's speed and pause, shared by whoever plays it and whoever controls it."""

    def __init__(self, *, speed: float = 1.0, paused: bool = False) -> None:
        if not speed > 0:
            raise ValueError(f"a replay's speed must be above 0, not {speed}")
        self._speed = speed
        self._paused = paused
        self._steps = 0  # turns let through while paused, not yet begun
        self._hurry = False  # the turn playing now was stepped: it plays at once
        self._changed = asyncio.Event()

    @property
    def speed(self) -> float:
        return self._speed

    @speed.setter
    def speed(self, value: float) -> None:
        if not value > 0:
            raise ValueError(f"a replay's speed must be above 0, not {value}")
        self._speed = value
        self._poke()

    @property
    def paused(self) -> bool:
        return self._paused

    def pause(self) -> None:
        self._paused = True
        self._poke()

    def resume(self) -> None:
        self._paused = False
        self._steps = 0
        self._poke()

    def step(self) -> None:
        """Play the rest of this turn, or the next one, at once, then hold before the turn after it."""
        self._paused = True
        self._steps += 1
        self._poke()

    @property
    def at_once(self) -> bool:
        """Whether what is left of this turn plays with no time between its pieces (instant speed, or a step)."""
        return (math.isinf(self._speed) and not self._paused) or self._hurry

    async def turn(self) -> None:
        """Called before a turn plays: hold while paused, unless a step lets it through."""
        self._hurry = False
        while self._paused:
            if self._take_step():
                return
            await self._next_change()

    async def wait(self, seconds: float) -> None:
        """Let ``seconds`` of recorded time go by, at the speed of the moment; hold while paused."""
        await asyncio.sleep(0)  # even at once, the rest of the program runs between pieces
        left = seconds
        loop = asyncio.get_running_loop()
        while left > 0 and not self._hurry:
            if self._paused:
                if self._take_step():  # a step mid-turn finishes this turn at once
                    return
                await self._next_change()
                continue
            if math.isinf(self._speed):
                return
            speed, started = self._speed, loop.time()
            try:
                async with asyncio.timeout(left / speed):
                    await self._next_change()
            except TimeoutError:
                return
            left -= (loop.time() - started) * speed

    def _take_step(self) -> bool:
        if self._steps:
            self._steps -= 1
            self._hurry = True
            return True
        return False

    async def _next_change(self) -> None:
        await self._changed.wait()

    def _poke(self) -> None:
        self._changed.set()
        self._changed = asyncio.Event()
