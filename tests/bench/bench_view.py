"""Benchmark: the workbench's conversation view under load, side by side with a bare Textual chat.

Run by hand: `python tests/bench/bench_view.py` (about three minutes on two cores). Both apps
run headless under Textual's Pilot, and every frame is encoded for a terminal as a real one
is (the headless driver only skips writing it), so a frame costs what it would on screen.
Each part runs in a child process of its own, so one app's memory does not count for the
next. The bare app is what a naive chat app does: a ``textual.widgets.Markdown`` per answer,
appended to a ``VerticalScroll`` and fed through ``Markdown.get_stream`` (``MarkdownStream``).
Prints, with ratios where machines differ:

- a 10,000-entry session resumed: to its first frame, and scrolling from its top to its end;
- a 5,000-entry transcript: appending one entry and folding one (a key press), the view's own
  work and to the frame that shows it, and memory per entry (tracemalloc);
- 400 chunks of Markdown a turn, all at once (each chunk yields to the event loop once, as a
  network read does), turn after turn: turn 1 and the last, both apps, and memory per turn (RSS);
- streaming 100 chunks a second with 40 finished answers on screen: CPU seconds per wall second;
- a key press while a reply streams: from the key to the frame that shows it, and Pilot's own costs.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from textual import events
from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.geometry import Region
from textual.widgets import Markdown

from chimera.core.events import (
    MessageCompleted,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from chimera.core.sessions.start import RunOptions
from chimera.tui.app import ChimeraApp, build_app
from chimera.tui.entry_lines import LINE_BUDGET
from chimera.tui.widgets.transcript_view import TranscriptView
from tests.bench.bench_sessions import _build

SIZE = (120, 40)
TURNS = 30  # streamed turns compared
MORE_TURNS = 30  # then the workbench goes on this many more: past its line cache's bound, memory a turn flattens
BARE_SECONDS = 45.0  # bare Textual stops short of TURNS once its turns have taken this long (they grow)
CHUNKS = 400  # a turn
PACE = 0.01  # seconds between chunks at 100 chunks a second
STREAM_SECONDS = 5.0
FINISHED = 40  # answers on screen while one streams
PRESSES = 20
ENTRIES = 5_000


# --- what is streamed ---------------------------------------------------------------------


def _answer(turn: int) -> list[str]:
    """400 chunks of Markdown (~24 KB): per section a heading, a paragraph, a list, a code block, a paragraph."""
    chunks: list[str] = []
    section = 0
    while len(chunks) < CHUNKS:
        chunks.append(f"## Step {turn}.{section}\n\n")
        chunks += [f"Some **streamed** words about `item_{n}`, and more text to wrap. " for n in range(12)]
        chunks.append("\n\n")
        chunks += [f"- a point with `x{n}` and a [link](https://example.com/{n})\n" for n in range(6)]
        chunks.append("\n```python\n")
        chunks += [f"def step_{section}_{n}(x):  return x * {n}  # some code\n" for n in range(8)]
        chunks.append("```\n\n")
        chunks += [f"More of the answer, *sentence {n}*, plain words that wrap on screen. " for n in range(9)]
        chunks.append("\n\n")
        section += 1
    return chunks[:CHUNKS]


def _words() -> Iterator[str]:
    """Short word chunks, as a model streams them: a paragraph break every 40 words."""
    n = 0
    while True:
        n += 1
        yield f"word{n % 97} " if n % 40 else "done.\n\n"


def _finished(index: int) -> str:
    return "".join(_answer(index)[:80])  # ~5 KB of Markdown


# --- frames ---------------------------------------------------------------------------------


class Frames:
    """Times every frame the app puts out, and encodes it for a terminal as a real driver does."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.count = 0
        self.last = 0.0
        self._waiting: list[tuple[Callable[[], bool], asyncio.Future[float]]] = []
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            if hasattr(renderable, "render_segments"):
                renderable.render_segments(app.console)
            self.count += 1
            self.last = now = time.perf_counter()
            for condition, shown in list(self._waiting):
                if not shown.done() and condition():
                    shown.set_result(now)
                    self._waiting.remove((condition, shown))

        app._display = display  # type: ignore[method-assign]

    async def when(self, condition: Callable[[], bool], timeout: float = 60.0) -> float:
        """The time of the first frame from now on drawn with ``condition`` true. If no frame comes
        (nothing was left to draw) and ``condition`` holds, the last frame showed it."""
        shown: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self._waiting.append((condition, shown))
        deadline = time.perf_counter() + timeout
        while not shown.done():
            before = self.count
            try:
                return await asyncio.wait_for(asyncio.shield(shown), 0.5)
            except TimeoutError:
                if self.count == before and condition():
                    self._waiting.remove((condition, shown))
                    return self.last
                if time.perf_counter() > deadline:
                    raise
        return shown.result()


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * resource.getpagesize()


def _at_end(view: Any) -> bool:
    return bool(view.scroll_offset.y >= view.max_scroll_y)


def _workbench() -> ChimeraApp:
    return build_app(RunOptions(workdir=Path.cwd(), model="bench"))


class BareChat(App[None]):
    """A naive Textual chat: a Markdown widget per answer in a scroll view that follows its end."""

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="chat")

    def on_mount(self) -> None:
        self.query_one(VerticalScroll).anchor()


# --- the workbench through its bus ----------------------------------------------------------


def _run_events(index: int, text: str) -> list[StepEvent]:
    message = {"role": "assistant", "content": [{"type": "text", "text": text}]}
    return [
        RunStarted(task=f"task {index}", model="bench", loop="react"),
        TextDelta(text=text),
        MessageCompleted(message=message, stop_reason="end_turn"),
        RunFinished(success=True, reason="completed", steps=1, cost=0.0),
    ]


async def _publish_finished(app: ChimeraApp, frames: Frames, count: int) -> None:
    app.run_shown.clear()
    for index in range(count):
        for event in _run_events(index, _finished(index)):
            app.session.bus.publish(event)
    view = app.query_one(TranscriptView)
    await frames.when(lambda: app.run_shown.is_set() and len(app.transcript) >= 3 * count and _at_end(view))


async def _end_run(app: ChimeraApp, frames: Frames) -> None:
    """The streaming answer completes and the run ends, on screen, before the app closes."""
    app.run_shown.clear()
    app.session.bus.publish(MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"))
    app.session.bus.publish(RunFinished(success=True, reason="completed", steps=1, cost=0.0))
    await frames.when(app.run_shown.is_set)


async def _stream_turns_workbench(turns: int) -> dict[str, Any]:
    app = _workbench()
    times, rss = [], [_rss()]
    async with app.run_test(size=SIZE):
        frames = Frames(app)
        view = app.query_one(TranscriptView)
        bus = app.session.bus
        for turn in range(turns):
            chunks = _answer(turn)
            app.run_shown.clear()
            start = time.perf_counter()
            bus.publish(RunStarted(task=f"turn {turn}", model="bench", loop="react"))
            for chunk in chunks:
                bus.publish(TextDelta(text=chunk))
                await asyncio.sleep(0)
            message = {"role": "assistant", "content": [{"type": "text", "text": "".join(chunks)}]}
            bus.publish(MessageCompleted(message=message, stop_reason="end_turn"))
            bus.publish(RunFinished(success=True, reason="completed", steps=1, cost=0.0))
            shown = await frames.when(lambda: app.run_shown.is_set() and _at_end(view))
            times.append(shown - start)
            rss.append(_rss())
    return {"times": times, "rss": rss}


async def _stream_turns_bare(turns: int) -> dict[str, Any]:
    app = BareChat()
    times, rss = [], [_rss()]
    async with app.run_test(size=SIZE):
        frames = Frames(app)
        chat = app.query_one(VerticalScroll)
        for turn in range(turns):
            if sum(times) + (times[-1] if times else 0.0) > BARE_SECONDS:
                break
            chunks = _answer(turn)
            start = time.perf_counter()
            markdown = Markdown()
            await chat.mount(markdown)
            stream = Markdown.get_stream(markdown)
            for chunk in chunks:
                await stream.write(chunk)
            await stream.stop()
            shown = await frames.when(lambda: _at_end(chat))
            times.append(shown - start)
            rss.append(_rss())
    return {"times": times, "rss": rss}


async def _cpu_workbench() -> dict[str, Any]:
    app = _workbench()
    async with app.run_test(size=SIZE):
        frames = Frames(app)
        await _publish_finished(app, frames, FINISHED)
        bus = app.session.bus
        bus.publish(RunStarted(task="stream", model="bench", loop="react"))
        used, wall, sent = await _paced(lambda text: bus.publish(TextDelta(text=text)))
        shown = frames.count
        await _end_run(app, frames)
    return {"cpu": used / wall, "sent": sent, "frames": shown}


async def _cpu_bare() -> dict[str, Any]:
    app = BareChat()
    async with app.run_test(size=SIZE):
        frames = Frames(app)
        chat = app.query_one(VerticalScroll)
        for index in range(FINISHED):
            await chat.mount(Markdown(_finished(index)))
        await frames.when(lambda: _at_end(chat) and len(chat.children) == FINISHED)
        markdown = Markdown()
        await chat.mount(markdown)
        stream = Markdown.get_stream(markdown)
        pending: list[str] = []

        def write(text: str) -> None:
            pending.append(text)

        async def feed() -> None:
            while True:
                if pending:
                    await stream.write(pending.pop(0))
                else:
                    await asyncio.sleep(PACE / 4)

        feeder = asyncio.create_task(feed())
        used, wall, sent = await _paced(write)
        feeder.cancel()
        await stream.stop()
    return {"cpu": used / wall, "sent": sent, "frames": frames.count}


async def _paced(send: Callable[[str], None]) -> tuple[float, float, int]:
    """Send a word chunk every PACE seconds for STREAM_SECONDS: (CPU seconds, wall seconds, chunks sent)."""
    words = _words()
    await asyncio.sleep(0.5)  # settle
    with _profiled():
        cpu, start = time.process_time(), time.perf_counter()
        sent = 0
        while (now := time.perf_counter()) - start < STREAM_SECONDS:
            send(next(words))
            sent += 1
            await asyncio.sleep(max(0.0, start + sent * PACE - now))
        return time.process_time() - cpu, time.perf_counter() - start, sent


@contextmanager
def _profiled() -> Iterator[None]:
    """With BENCH_PROFILE=<file>, a cProfile of the measured stretch goes to <file> (the figures are then not)."""
    target = os.environ.get("BENCH_PROFILE")
    if not target:
        yield
        return
    profile = cProfile.Profile()
    profile.enable()
    try:
        yield
    finally:
        profile.disable()
        profile.dump_stats(target)


async def _keys() -> dict[str, Any]:
    """A key that moves the cursor, pressed while a reply streams at 100 chunks a second."""
    app = _workbench()
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await _publish_finished(app, frames, FINISHED)
        view = app.query_one(TranscriptView)
        view.focus()
        drawn: list[int | None] = [None]  # the entry the cursor mark was last drawn on
        original = view.render_line

        def render_line(y: int) -> Any:
            strip = original(y)
            index = bisect_right(view._starts, view.scroll_offset.y + y) - 1
            if index == view.cursor:
                drawn[0] = index
            return strip

        view.render_line = render_line  # type: ignore[method-assign]

        async def press(key: str) -> float:
            drawn[0] = None
            start = time.perf_counter()
            app._driver.send_message(events.Key(key, None))  # type: ignore[union-attr]
            shown = await frames.when(lambda: view.cursor is not None and drawn[0] == view.cursor)
            return shown - start

        async def presses() -> list[float]:
            times = []
            for n in range(PRESSES):
                await asyncio.sleep(0.1 + 0.013 * (n % 5))  # not in step with the frames
                times.append(await press("up" if n % 2 == 0 else "down"))
            return times

        async def pilot_presses() -> list[float]:
            times = []
            for n in range(PRESSES // 2):
                start = time.perf_counter()
                await pilot.press("up" if n % 2 == 0 else "down")
                times.append(time.perf_counter() - start)
            return times

        idle = await presses()
        pilot_idle = await pilot_presses()
        pauses = []
        for _ in range(PRESSES // 2):
            start = time.perf_counter()
            await pilot.pause()
            pauses.append(time.perf_counter() - start)
        bus = app.session.bus
        bus.publish(RunStarted(task="stream", model="bench", loop="react"))
        words = _words()

        async def stream() -> None:
            while True:
                bus.publish(TextDelta(text=next(words)))
                await asyncio.sleep(PACE)

        streamer = asyncio.create_task(stream())
        await asyncio.sleep(0.5)
        streaming = await presses()
        pilot_streaming = await pilot_presses()
        streamer.cancel()
        await _end_run(app, frames)
    return {
        "idle": idle,
        "streaming": streaming,
        "pilot_idle": pilot_idle,
        "pilot_streaming": pilot_streaming,
        "pause": pauses,
    }


# --- a long transcript ------------------------------------------------------------------------


def _history_events(index: int) -> list[StepEvent]:
    """A run of four entries: the task, a read (folded), the answer, its end."""
    args = {"path": f"src/m{index}.py"}
    output = "".join(f"{n:>6}\tline {n}\n" for n in range(40))
    answer = f"Answer {index}: " + "Some **streamed** words, a `name`, and more text to wrap. " * 3
    return [
        RunStarted(task=f"task {index}", model="m", loop="react"),
        ToolCallStarted(call_id=f"c{index}", name="read", args=args),
        ToolCallFinished(call_id=f"c{index}", name="read", args=args, is_error=False, duration_ms=3, output=output),
        TextDelta(text=answer),
        MessageCompleted(message={"role": "assistant", "content": []}, stop_reason="end_turn"),
        RunFinished(success=True, reason="completed", steps=2, cost=0.0),
    ]


def _fill(app: ChimeraApp, entries: int) -> None:
    for index in range(entries // 4):
        app.transcript.apply_all(_history_events(index))


async def _big() -> dict[str, Any]:
    app = _workbench()
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        view = app.query_one(TranscriptView)
        _fill(app, ENTRIES)
        view.refresh_entries()
        await frames.when(lambda: _at_end(view))
        view.focus()

        def draw() -> None:  # what a frame asks of the view: the lines it marked for repainting
            view.render_lines(Region(0, 0, view.size.width, view.size.height))

        work_append, work_fold, append, fold, pilot_append, pilot_idle = [], [], [], [], [], []
        for index in range(20):
            view.scroll_end(animate=False, immediate=True)  # following the end, as while a run goes
            await frames.when(lambda: _at_end(view))
            # the view's own work: the reducer, layout, every visible line
            start = time.perf_counter()
            app.transcript.note(f"one more {index}")
            view.refresh_entries()
            draw()
            work_append.append(time.perf_counter() - start)
            await frames.when(lambda: _at_end(view))
            # to the frame that shows it, as the bridge does it
            count = len(app.transcript)
            start = time.perf_counter()
            app.transcript.note(f"and another {index}")
            view.refresh_entries()
            append.append(await frames.when(lambda n=count: _at_end(view) and len(app.transcript) > n) - start)
            # a fold by key: the cursor on the last read, enter
            view.cursor = len(app.transcript) - 5
            while app.transcript.entries[view.cursor].kind != "tool":
                view.cursor -= 1
            before = app.transcript.entries[view.cursor].folded
            start = time.perf_counter()
            view.action_fold()
            draw()
            work_fold.append(time.perf_counter() - start)
            await frames.when(lambda: True)
            entry = app.transcript.entries[view.cursor]
            start = time.perf_counter()
            app._driver.send_message(events.Key("enter", "\r"))  # type: ignore[union-attr]
            fold.append(await frames.when(lambda e=entry, was=before: e.folded == was) - start)  # type: ignore[misc]
            # Pilot's way: a change, then its pause; and its pause with nothing changed
            start = time.perf_counter()
            app.transcript.note(f"and one by Pilot {index}")
            view.refresh_entries()
            await pilot.pause()
            pilot_append.append(time.perf_counter() - start)
            start = time.perf_counter()
            await pilot.pause()
            pilot_idle.append(time.perf_counter() - start)
    return {
        "work_append": work_append,
        "work_fold": work_fold,
        "append": append,
        "fold": fold,
        "pilot_append": pilot_append,
        "pilot_idle": pilot_idle,
    }


async def _memory() -> dict[str, Any]:
    """Memory per entry (tracemalloc): every block allocated while the transcript was filled and drawn and
    still alive after, so the transcript, the view's caches and whatever Textual kept for them."""
    app = _workbench()
    async with app.run_test(size=SIZE):
        frames = Frames(app)
        view = app.query_one(TranscriptView)
        await frames.when(lambda: True)
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        _fill(app, ENTRIES)
        view.refresh_entries()
        await frames.when(lambda: _at_end(view))
        shown = tracemalloc.get_traced_memory()[0]
        for entry in app.transcript.entries:  # every entry drawn, as scrolling through all of it does
            view.entry_lines.lines(entry, view._width)
        view._layout()
        await frames.when(lambda: True)
        drawn = tracemalloc.get_traced_memory()[0]
        tracemalloc.stop()
        count = len(app.transcript)
    return {"entries": count, "shown": (shown - before) / count, "drawn": (drawn - before) / count}


async def _resume() -> dict[str, Any]:
    app = build_app(RunOptions(resume="bench", model="bench"))
    start = time.perf_counter()
    async with app.run_test(size=SIZE) as pilot:
        frames = Frames(app)
        await app.history_shown.wait()
        view = app.query_one(TranscriptView)
        first = await frames.when(lambda: _at_end(view) and view.virtual_size.height > 0) - start
        start = time.perf_counter()
        view.scroll_home(animate=False, immediate=True)
        await pilot.pause()
        view.scroll_end(animate=False, immediate=True)
        await pilot.pause()
        scrolled = time.perf_counter() - start
    return {"first": first, "scrolled": scrolled}


PARTS: dict[str, Callable[[], Any]] = {
    "resume": _resume,
    "big": _big,
    "memory": _memory,
    "turns-workbench": lambda: _stream_turns_workbench(TURNS + MORE_TURNS),
    "turns-bare": lambda: _stream_turns_bare(TURNS),
    "cpu-workbench": _cpu_workbench,
    "cpu-bare": _cpu_bare,
    "keys": _keys,
}


def _part(name: str) -> dict[str, Any]:
    """Run one part in a child process of its own; its figures come back as JSON on its last line."""
    env = dict(os.environ)
    done = subprocess.run(
        [sys.executable, __file__, "--part", name], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        sys.exit(f"part {name} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, round(len(values) * 0.95) - 1)]


def _say(label: str, figure: str, note: str = "") -> None:
    print(f"  {label:<54}{figure:>19}   {note}".rstrip())


def main() -> None:
    if len(sys.argv) == 3 and sys.argv[1] == "--part":
        print(json.dumps(asyncio.run(PARTS[sys.argv[2]]())))
        return
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        os.environ["CHIMERA_HOME"] = str(home)
        os.environ.pop("ANTHROPIC_API_KEY", None)
        os.environ["ANTHROPIC_BASE_URL"] = "http://127.0.0.1:9"  # never called: a model is configured, not the demo
        began = time.perf_counter()
        load = " ".join(f"{figure:.2f}" for figure in os.getloadavg())
        print(f"load average at the start: {load} ({os.cpu_count()} cores)")
        _build(home, 10_000)
        _resumed(_part("resume"))
        _long(_part("big"), _part("memory"))
        _turns(_part("turns-workbench"), _part("turns-bare"))
        _cpu(_part("cpu-workbench"), _part("cpu-bare"))
        _keys_report(_part("keys"))
        load = " ".join(f"{figure:.2f}" for figure in os.getloadavg())
        print(f"\nload average at the end: {load}; the bench took {time.perf_counter() - began:.0f} s")


def _resumed(resume: dict[str, Any]) -> None:
    print("a 10,000-entry session resumed:")
    _say("from starting the app to its first frame", _ms(resume["first"]), "(target 1,000 ms)")
    _say("then scroll from its top to its end (two Pilot pauses)", _ms(resume["scrolled"]))


def _long(big: dict[str, Any], memory: dict[str, Any]) -> None:
    print(f"\n{ENTRIES:,} entries ({ENTRIES // 4:,} runs of a task, a read, an answer and its end), medians of 20:")
    _say("append one: the view's own work", _ms(_median(big["work_append"])), "(target 16 ms)")
    _say("append one: to the frame that shows it", _ms(_median(big["append"])))
    _say("fold one: the view's own work", _ms(_median(big["work_fold"])), "(target 16 ms)")
    _say("fold one: enter pressed, to the frame that shows it", _ms(_median(big["fold"])))
    _say("Pilot: append then pause", _ms(_median(big["pilot_append"])))
    _say("Pilot: a pause with nothing changed", _ms(_median(big["pilot_idle"])))
    print("  memory an entry (tracemalloc: all that the process still holds of what it allocated meanwhile)")
    _say("after the first frame", f"{memory['shown'] / 1024:.1f} KB")
    _say("with every entry drawn once (scrolled end to end)", f"{memory['drawn'] / 1024:.1f} KB", "(target 5 KB)")


def _turns(ours: dict[str, Any], bare: dict[str, Any]) -> None:
    def growth(rss: list[int], first: int, last: int) -> str:  # a turn, turns first..last (rss[n]: after turn n)
        return f"{(rss[last] - rss[first - 1]) / (last - first + 1) / 1024:,.0f} KB"

    def three(times: list[float], last: bool = False) -> float:
        return _median(times[-3:] if last else times[:3])

    everything, o, b = ours["times"], ours["times"][:TURNS], bare["times"]
    print(f"\n{CHUNKS} chunks of Markdown a turn (~24 KB), all at once, {len(o)} turns")
    print("  (each chunk yields to the event loop once; a turn: from its first chunk to the frame showing its end)")
    for name, times, rss in (("workbench", o, ours["rss"]), ("bare Textual", b, bare["rss"])):
        _say(f"{name}: turn 1", f"{times[0]:.2f} s")
        _say(f"{name}: turn {len(times)}", f"{times[-1]:.2f} s", f"(all {len(times)} turns: {sum(times):.1f} s)")
        _say(f"{name}: memory growth a turn (RSS, turns 2-{len(times)})", growth(rss, 2, len(times)))
    if len(b) < len(o):
        print(f"  (bare Textual stopped after {len(b)} turns, {sum(b):.0f} s: its turns keep growing)")
    _say("workbench turn 1 / bare turn 1", f"{o[0] / b[0]:.2f}", f"(turns 1-3: {three(o) / three(b):.2f}; target 0.25)")
    _say(
        f"workbench turn {len(o)} / its turn 1",
        f"{o[-1] / o[0]:.2f}",
        f"(last 3 / first 3: {three(o, True) / three(o):.2f}; target 1.5)",
    )
    _say(f"bare turn {len(b)} / its turn 1", f"{b[-1] / b[0]:.2f}")
    _say(f"workbench turn {len(b)} / bare turn {len(b)}", f"{o[len(b) - 1] / b[-1]:.2f}")
    if len(everything) > TURNS:
        n = len(everything)
        print(f"  the workbench goes on to turn {n} (its line cache holds at most {LINE_BUDGET:,} lines):")
        _say(f"workbench: turn {n}", f"{everything[-1]:.2f} s", f"(turn {n} / turn 1: {everything[-1] / o[0]:.2f})")
        _say(f"workbench: memory growth a turn (RSS, turns {TURNS + 1}-{n})", growth(ours["rss"], TURNS + 1, n))


def _cpu(ours: dict[str, Any], bare: dict[str, Any]) -> None:
    pace = f"{1 / PACE:.0f} short chunks a second for {STREAM_SECONDS:.0f} s"
    print(f"\nstreaming {pace}, {FINISHED} finished answers above:")
    print("  (process CPU seconds / wall seconds)")
    for name, figures, note in (("workbench", ours, "(target 20%)"), ("bare Textual", bare, "")):
        frames = f"({figures['sent']} chunks, {figures['frames']} frames)"
        _say(f"{name} {frames}", f"{figures['cpu'] * 100:.1f}%", note)


def _keys_report(keys: dict[str, Any]) -> None:
    print(
        f"\na key that moves the cursor ({FINISHED} finished answers on screen), from the key to the frame showing it:"
    )
    streaming = keys["streaming"]
    _say(f"while a reply streams at {1 / PACE:.0f} chunks/s: median", _ms(_median(streaming)), "(target 50 ms)")
    _say("the same: 95th percentile / worst", f"{_ms(_p95(streaming))} / {_ms(max(streaming))}")
    _say("nothing streaming: median / worst", f"{_ms(_median(keys['idle']))} / {_ms(max(keys['idle']))}")
    print("  Pilot's own costs (its press waits for the process to look idle; a test pays them, a person does not):")
    _say(
        "pilot.press while it streams / idle",
        f"{_ms(_median(keys['pilot_streaming']))} / {_ms(_median(keys['pilot_idle']))}",
    )
    _say("pilot.pause with nothing changed", _ms(_median(keys["pause"])))


if __name__ == "__main__":
    main()
