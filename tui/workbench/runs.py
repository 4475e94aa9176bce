"""Provides ``Runs``: the workbench's runs of the session (a task, a compaction, a summary between runs) and
stopping them.

A run is a worker of its own (group ``run``, one at a time). While one works the session's other commands wait
(``running``), the input's cursor holds still, and escape interrupts it: the stream stops, running tools are
killed, and words it never read come back to the input. The run is over once its end is on screen and its
worker is done, whichever comes last (``shown``).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import Awaitable
from typing import TYPE_CHECKING, TypeVar

from textual.css.query import NoMatches

from chimera.core.errors import ChimeraError
from chimera.tui.outside import tell
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.transcript_view import TranscriptView

if TYPE_CHECKING:
    from chimera.tui.app import ChimeraApp

__all__ = ["Runs"]

_T = TypeVar("_T")


class Runs:
    """The session's runs in the workbench."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self._working = False
        self.compacting = False  # a summary asked between runs (a compaction, a branch left behind) works
        self.stopped_note = ""  # what stopping it says
        self.shown = asyncio.Event()  # the run's end is on screen and the next task can be sent
        self.end_shown = False  # the run's end is on screen (its worker may still be finishing)

    def commands(self) -> dict[str, object]:
        return {"plan": self.plan, "compact": self.compact, "interrupt": self.interrupt, "resend": self.resend}

    @property
    def running(self) -> bool:
        """Whether a run works (or a comparison, or a summary between runs): the session's other commands wait."""
        return self._working

    @running.setter
    def running(self, running: bool) -> None:
        self._working = running
        self.app.show_keys()
        with contextlib.suppress(NoMatches):  # no input (the app is closing)
            # Still while a run works: a blink is a screen update of its own, twice a second, among the run's.
            self.app.query_one(PromptInput).cursor_blink = not running

    def start(self, task: str, *, loop: str | None = None) -> None:
        """Run ``task`` (with strategy ``loop`` for it alone, when given)."""
        self._begin(self.app.session.run(task, loop=loop))

    def _begin(self, run: Awaitable[object]) -> None:
        self.running = True
        self.shown.clear()
        self.end_shown = False
        self.app.run_worker(self._run(run), group="run", exclusive=True, exit_on_error=False, name="run")

    async def _run(self, run: Awaitable[object]) -> None:
        try:
            await self.app.session_tree.settled()  # a task typed during a switch runs on the branch switched to
            await run
        finally:
            if inspect.iscoroutine(run) and inspect.getcoroutinestate(run) == inspect.CORO_CREATED:
                run.close()  # stopped before it began
            self.running = False
            self.over()

    def resend(self, ref: str) -> bool:
        """``/resend [NODE]``: words the conversation left out (the newest, or NODE's), sent again as a task."""
        app = self.app
        node = app.session.store.tree.resolve(ref.strip()) if ref.strip() else app.state.left_out
        if node is None:
            return app.commands.refuse(f"/resend: this session has no node {ref.strip()!r}: /tree shows them.")
        try:
            app.session.check_resend(node)
        except ChimeraError as err:
            return app.commands.refuse(f"/resend: {err}")
        app.query_one(TranscriptView).follow()
        self._begin(app.session.resend(node))
        return True

    def ended(self) -> None:
        """The run's end is on screen (its ``run_finished`` event)."""
        self.end_shown = True
        self.over()

    def over(self) -> None:
        """Once the run's end is on screen and its worker is done (either may come first), the run is over."""
        if self.end_shown and not self.running:
            self.shown.set()

    def failed(self, error: BaseException | None) -> None:
        """A fault in the engine itself: said on screen instead of hanging at "running"."""
        self.app.conversation.say(f"✗ the run failed unexpectedly: {type(error).__name__}: {error}", "error")
        self.app.conversation.show_status(state="failed")
        self.shown.set()

    # --- the commands ---------------------------------------------------------------------

    def plan(self, task: str) -> None:
        self.start(task, loop="plan")

    def interrupt(self) -> None:
        """Stop the run: the stream ends, tools are killed, the conversation stays valid. While a comparison
        runs, every variant stops (each ends as stopped)."""
        from chimera.tui.screens.compare import CompareScreen  # imported with /compare: here only to tell it

        app = self.app
        if isinstance(app.screen, CompareScreen):
            app.screen.comparison.stop()
            tell(app, "Stopping every variant…", timeout=2)
        elif self.compacting:  # nothing is recorded until the summary is in: stopping loses nothing
            app.workers.cancel_group(app, "run")
            app.conversation.show_status(state="interrupted")
            tell(app, self.stopped_note, timeout=3)
        elif self.running:
            app.session.interrupt()  # words the run never read come back as events (see Prompt.take_back)
            unsent = app.session.take_follow_ups()
            app.state.follow_ups = []
            app.prompt.give_back([("queued", text) for text in unsent])  # tasks queued after the run: back too
            for text in unsent:
                app.conversation.say(f"↩ not run, back in the input: {text}", "warning")
            tell(app, "Interrupting…", timeout=2)

    async def aside(self, state: str, stopped: str, request: Awaitable[_T]) -> _T | ChimeraError:
        """A model request between runs (a compaction, a branch's summary) in a ``run`` worker: the status line
        spins ``state`` with its time, escape stops it (saying ``stopped``: nothing is kept until it is in), the
        keys wait for it. Its result, or the error it ended in."""
        self.compacting = self.running = True
        self.stopped_note = stopped
        self.app.state.status.begin(state)
        self.app.conversation.show_status()
        try:
            return await request
        except ChimeraError as err:
            return err
        finally:
            self.compacting = self.running = False

    def compact(self, focus: str) -> None:
        """``/compact [focus]``: summarize the older part of the conversation now."""
        self.app.run_worker(self._compact(focus), group="run", exclusive=True, exit_on_error=False, name="compact")

    async def _compact(self, focus: str) -> None:
        conversation = self.app.conversation
        stopped = "Compaction stopped: the conversation is as it was."
        done = await self.aside("compacting", stopped, self.app.session.compact(focus))
        if isinstance(done, ChimeraError):
            conversation.say(f"✗ compaction failed: {done}", "error")
            conversation.show_status(state="failed")
            return
        conversation.show_status(state="idle")
        if done is None:
            tell(self.app, "Nothing to compact: the conversation is still short.", timeout=4)
