"""A replay's pace: paused, stepped a turn at a time, sped up mid-turn; each turn takes its recorded time."""

from __future__ import annotations

import asyncio
import math

import pytest

from chimera.core.providers.base import ModelDone, ModelRequest, TextChunk
from chimera.core.providers.pace import INSTANT, Pace
from chimera.core.providers.replay import RecordedTurn, ReplayProvider
from chimera.core.sessions.recorded import LONGEST_TURN, recorded_runs
from chimera.core.sessions.tree import Node, SessionTree

HOUR = 3600.0
REQUEST = ModelRequest(system="", messages=[], tools=[], max_tokens=100)


def turn(words: str, seconds: float = 0.0) -> RecordedTurn:
    return RecordedTurn(message={"role": "assistant", "content": [{"type": "text", "text": words}]}, seconds=seconds)


async def play(provider: ReplayProvider, shown: list[str], first: asyncio.Event | None = None) -> None:
    """One turn of the provider, its words appended to ``shown`` as they stream (``first`` set at the first)."""
    async for chunk in provider.stream(REQUEST):
        if isinstance(chunk, TextChunk):
            shown.append(chunk.text)
            if first is not None:
                first.set()
        assert not isinstance(chunk, ModelDone) or chunk.message["content"]


async def still_going(task: asyncio.Task[None]) -> bool:
    """Whether ``task`` is still held after the program had every chance to run it on."""
    done, _ = await asyncio.wait({task}, timeout=0.05)
    return not done


async def test_a_paused_replay_plays_one_turn_a_step() -> None:
    """Paused, nothing streams; a step plays one whole turn at once (however long it took) and holds again."""
    clock = Pace(paused=True)
    provider = ReplayProvider([turn("first answer here", HOUR), turn("second answer", HOUR)], clock=clock)
    shown: list[str] = []
    first = asyncio.create_task(play(provider, shown))
    assert await still_going(first)
    assert shown == []
    clock.step()
    await asyncio.wait_for(first, 5)
    assert "".join(shown) == "first answer here"
    second = asyncio.create_task(play(provider, shown))
    assert await still_going(second)
    assert "".join(shown) == "first answer here"
    clock.resume()
    clock.speed = INSTANT
    await asyncio.wait_for(second, 5)
    assert "".join(shown) == "first answer heresecond answer"


async def test_a_change_of_speed_or_a_pause_takes_effect_mid_turn() -> None:
    """A turn recorded as an hour long plays at 1×; switched to instant mid-way, the rest comes at once."""
    clock = Pace()
    provider = ReplayProvider([turn("one two three four", HOUR)], clock=clock)
    shown: list[str] = []
    first = asyncio.Event()
    task = asyncio.create_task(play(provider, shown, first))
    await asyncio.wait_for(first.wait(), 5)
    assert await still_going(task)  # the next word is a quarter of an hour away
    assert shown == ["one "]
    clock.pause()
    clock.speed = INSTANT
    assert await still_going(task)  # paused, even at instant speed
    assert shown == ["one "]
    clock.resume()
    await asyncio.wait_for(task, 5)
    assert "".join(shown) == "one two three four"


async def test_a_step_mid_turn_finishes_the_turn_and_holds_the_next() -> None:
    clock = Pace()
    provider = ReplayProvider([turn("one two three", HOUR), turn("next", 0.0)], clock=clock)
    shown: list[str] = []
    first = asyncio.Event()
    task = asyncio.create_task(play(provider, shown, first))
    await asyncio.wait_for(first.wait(), 5)
    clock.step()
    await asyncio.wait_for(task, 5)
    assert "".join(shown) == "one two three"
    held = asyncio.create_task(play(provider, shown))
    assert await still_going(held)
    clock.resume()
    await asyncio.wait_for(held, 5)


def test_a_speed_must_be_above_zero() -> None:
    for bad in (0.0, -1.0, math.nan):
        with pytest.raises(ValueError, match="above 0"):
            Pace(speed=bad)
        with pytest.raises(ValueError, match="above 0"):
            Pace().speed = bad


def test_each_recorded_turn_takes_the_time_it_took_bounded() -> None:
    """A turn's time is from the message before it; a skewed or crafted clock gives 0, a long gap is capped."""
    tree = SessionTree()
    times = [100.0, 103.5, 104.0, 50.0, 60.0, 60.0 + 10 * HOUR, 60.0 + 10 * HOUR, math.inf]
    kinds = ["user", "assistant", "tool_result", "assistant", "tool_result", "assistant", "tool_result", "assistant"]
    parent = None
    for index, (kind, ts) in enumerate(zip(kinds, times, strict=True)):
        if kind == "assistant":
            content: list[dict[str, object]] = [{"type": "tool_use", "id": f"c{index}", "name": "ls", "input": {}}]
            if index == len(kinds) - 1:
                content = [{"type": "text", "text": "done"}]
        elif kind == "tool_result":
            content = [{"type": "tool_result", "tool_use_id": f"c{index - 1}", "content": "ok"}]
        else:
            content = [{"type": "text", "text": "task"}]
        role = "assistant" if kind == "assistant" else "user"
        node = Node(id=f"n{index}", parent_id=parent, kind=kind, ts=ts, message={"role": role, "content": content})
        tree.add(node)
        parent = node.id
    (run,) = recorded_runs(tree)
    assert [t.seconds for t in run.turns] == [3.5, 0.0, LONGEST_TURN, 0.0]
