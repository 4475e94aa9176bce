"""Provides ``Opener``: the session opening after the workbench's first frame, and what is sent meanwhile.

The ``chimera`` command draws its first frame from the session's ``Opening`` and opens the session right after,
in a thread (``sessions.start.open_session``). While it opens, another process may hold the workspace: a line
over the input names the holder until the session opens (ctrl+q still quits at once, ending the wait). What
the person sends meanwhile (a task, a command) leaves the input and waits, then goes in the order it was sent,
as if sent then. An error opening the session ends the workbench; the command says it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from textual.widgets import Static
from textual.worker import WorkType

from chimera.core.errors import ChimeraError
from chimera.core.wording import shown_path
from chimera.tui.commands import is_command, parse
from chimera.tui.outside import tell
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.prompt_input import PromptInput

if TYPE_CHECKING:
    from pathlib import Path

    from chimera.core.sessions.session import Session
    from chimera.core.sessions.workspace_lock import LockWait
    from chimera.tui.app import ChimeraApp

__all__ = ["Opener"]


class Opener:
    """The opening of the workbench's session, and what was sent before it was open."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self.error: ChimeraError | OSError | None = None  # why the session could not open (the app ended)
        self._opening: asyncio.Future[Session] | None = None  # the session opening, until it is taken
        self._lock_wait: LockWait | None = None  # how the opening's wait for the workspace is shown, and ended
        self._waiting: list[Callable[[], Awaitable[object]]] = []  # sent before the session was open, in order

    def begin(self) -> None:
        """Open the session off the event loop; the workbench takes it once it is open."""
        from chimera.core.sessions.start import open_session  # the session's machinery: after the first frame
        from chimera.core.sessions.workspace_lock import LockWait

        loop = asyncio.get_running_loop()

        def told(workspace: Path, holders: str) -> None:  # (from the thread that opens the session)
            with contextlib.suppress(RuntimeError):  # the workbench has closed meanwhile
                loop.call_soon_threadsafe(self._show_lock_wait, workspace, holders)

        self._lock_wait = LockWait(told)
        self._opening = asyncio.ensure_future(open_session(self.app.start, self._lock_wait))
        # Handed over uncalled: a workbench closed before the worker started leaves no coroutine unawaited.
        work: WorkType[None] = self._take
        self.app.run_worker(work, group="open", exit_on_error=True)

    async def _take(self) -> None:
        """The session, once open, to the workbench; an error opening it ends the app (the command says it)."""
        assert self._opening is not None
        try:
            session = await asyncio.shield(self._opening)  # (a quit meanwhile lets it open, then closes it)
        except (ChimeraError, OSError) as err:
            self.error = err
            self.app.exit(return_code=1)
            return
        self._opening = None
        self.app.take_session(session)
        await self.run_waiting()

    def _show_lock_wait(self, workspace: Path, holders: str) -> None:
        """Opening waits for a workspace another process holds: say so, and who (ctrl+q still quits at once)."""
        if not self.app.is_open and self.app.is_running:
            line = f"Waiting for {shown_path(workspace)}: another process holds it ({holders}). ctrl+q quits."
            shown = Static(line, markup=False, id="lock-wait")
            shown.styles.padding = (0, 2)  # (under the welcome's own lines)
            self.app.query_one("#middle").mount(shown)

    def sent(self, value: str) -> None:
        """Enter before the session is open: ``/quit`` quits; anything else leaves the input (its pastes whole)
        and goes once the session is open, as if sent then."""
        app = self.app
        app.query_one(CompletionList).hide()
        if not value.strip():
            return
        if is_command(value) and parse(value)[0] == "quit":
            app.exit()
            return
        prompt = app.query_one(PromptInput)
        whole = prompt.whole(value)
        prompt.take_sent(value)
        self.when_open(lambda: app.prompt.sent_before_open(whole))
        tell(app, "Sent: it goes as soon as the session is open (a moment).", timeout=3)

    def when_open(self, send: Callable[[], Awaitable[object]]) -> None:
        """``send`` (what the person sent: a task, a command) once the session is open: now if it is."""
        self._waiting.append(send)
        if self.app.is_open and len(self._waiting) == 1:
            work: WorkType[None] = self.run_waiting
            self.app.run_worker(work, group="waiting")

    async def run_waiting(self) -> None:
        """What was sent while the session opened, in the order it was sent."""
        while self._waiting:
            await self._waiting[0]()
            self._waiting.pop(0)

    async def close(self) -> Session | None:
        """The workbench closes: a session still opening is let open (a wait for the workspace ends at once),
        to be closed unused; it, or None."""
        if self._opening is None:
            return None
        if self._lock_wait is not None:
            self._lock_wait.stop.set()
        with contextlib.suppress(ChimeraError, OSError):
            return await self._opening
        return None
