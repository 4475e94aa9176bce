"""Benchmark: a key typed in the input while a reply streams, with the plan panel and a question open.

Run by hand: `python tests/bench/bench_keys_panel.py` (under a minute). The real workbench runs headless
under Textual's Pilot, every frame encoded for a terminal as a real one is (``bench_view.Frames``), with
40 finished answers on screen, a proposed plan in its panel and a permission question above the input,
while a reply streams at 100 chunks a second. Each key goes to the app as a terminal's would (not through
Pilot, whose press waits for the app to look idle); its time is from the key to the first frame after the
input holds it (the input redraws on the change, so that frame shows it). The question waits unfocused
beside the input (a question never takes the focus itself: the keys are the input's). Prints the median, the
95th percentile (target 50 ms) and the worst.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual import events

from chimera.core.events import PermissionRequested, PlanProposed, RunStarted, TextDelta
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.question_panel import QuestionPanel
from tests.bench.bench_view import (
    FINISHED,
    PACE,
    SIZE,
    Frames,
    _end_run,
    _median,
    _ms,
    _p95,
    _publish_finished,
    _say,
    _words,
    _workbench,
)

PRESSES = 60
STEPS = [f"Change `module_{n}.py` so that **step {n}** holds" for n in range(8)]


async def _measure() -> list[float]:
    app = _workbench()
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await _publish_finished(app, frames, FINISHED)
        bus = app.session.bus
        bus.publish(RunStarted(task="stream", model="bench", loop="plan"))
        bus.publish(PlanProposed(steps=STEPS, request_id="plan:bench"))
        args = {"command": "pytest -q tests/test_module.py"}
        bus.publish(PermissionRequested(request_id="perm:bench", call_id="c1", name="bash", args=args))
        prompt = app.query_one(PromptInput)
        prompt.focus()
        await frames.when(lambda: app.query_one(QuestionPanel).has_class("-shown"))
        await pilot.pause()
        expected = [0]
        words = _words()

        async def stream() -> None:
            while True:
                bus.publish(TextDelta(text=next(words)))
                await asyncio.sleep(PACE)

        streamer = asyncio.create_task(stream())
        await asyncio.sleep(0.5)
        prompt.focus()
        await pilot.pause()
        times: list[float] = []
        for n in range(PRESSES):
            await asyncio.sleep(0.08 + 0.013 * (n % 5))  # typing, not in step with the frames
            key, char = ("x", "x") if n % 2 == 0 else ("backspace", None)
            expected[0] = len(prompt.value) + (1 if char else -1)
            start = time.perf_counter()
            app._driver.send_message(events.Key(key, char))  # type: ignore[union-attr]
            shown = await frames.when(lambda: len(prompt.value) == expected[0])  # the first frame after it is in
            times.append(shown - start)
        streamer.cancel()
        assert app.focused is prompt, "the question took the focus while the person typed"
        assert len(app.state.questions) == 2, "a key answered a question"
        await _end_run(app, frames)
    return times


def main() -> None:
    os.environ.setdefault("ANTHROPIC_API_KEY", "bench-no-request-is-sent")  # a model session, not the demo's replay
    times = asyncio.run(_measure())
    print(
        f"a key typed in the input while a reply streams at {1 / PACE:.0f} chunks/s, the plan panel and a "
        f"question open, {FINISHED} finished answers on screen ({len(times)} keys), to the frame showing it:"
    )
    _say("median", _ms(_median(times)))
    _say("95th percentile / worst", f"{_ms(_p95(times))} / {_ms(max(times))}", "(target p95 50 ms)")


if __name__ == "__main__":
    main()
