"""Provides ``Sessions``: the workbench's commands about the session itself.

``/sessions`` opens the session picker over the workbench (the session chosen opens next), ``/export [FILE]``
writes the session as Markdown and says where, ``/replay`` says how to watch it again (``chimera replay ID``:
a replay is an app of its own), ``/new`` closes the session and opens a fresh one in the same workspace with
the same choices, ``/compare SPEC ...`` runs the last task again as variants side by side (``CompareScreen``).
The picker, the comparison and the export are imported when their command is first given: nothing of them is
on the first screen.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.wording import command, shown_path
from chimera.tui.outside import tell
from chimera.tui.widgets.welcome import Welcome
from chimera.tui.workbench.focus import open_screen

if TYPE_CHECKING:  # the session's modules load with it, after the workbench's first frame
    from chimera.core.sessions.session import Session
    from chimera.tui.app import ChimeraApp
    from chimera.tui.screens.compare import Adopted

__all__ = ["Sessions"]


class Sessions:
    """``/sessions``, ``/export``, ``/replay``, ``/new`` and ``/compare``."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self.resume_next: str | None = None  # a session chosen with /sessions, opened when this one closes

    def commands(self) -> dict[str, object]:
        return {
            "sessions": self.pick,
            "export": self.export,
            "replay": self.replay,
            "new": self.new,
            "compare": self.compare,
        }

    async def pick(self) -> None:
        """``/sessions``: the session picker over the workbench, its filter taking the keys typed from then on;
        the session chosen opens next."""
        from chimera.tui.screens.sessions import SessionPicker

        await open_screen(self.app, SessionPicker(self.app.session.env.workdir), self.resume)

    def resume(self, session_id: str | None) -> None:
        """The session picker's answer: close the workbench so that ``chimera`` opens ``session_id`` next.
        None, or this session: nothing changes."""
        app = self.app
        if session_id is None or session_id == app.session.id:
            return
        if app.session.demo:
            tell(app, "Resuming a session needs a model: quit, set ANTHROPIC_API_KEY, and start again.", timeout=6)
            return
        if app.runs.running:
            tell(app, "A run is going: interrupt it (escape) or let it finish, then choose again.", timeout=5)
            return
        self.resume_next = session_id
        app.exit()

    async def export(self, target: str) -> bool:
        """Write the session's active path as Markdown to ``target`` (the workspace's ``chimera-<id>.md`` by
        default; a relative path is taken in the workspace)."""
        from chimera.core.sessions.export import export_markdown

        session = self.app.session
        path = self._export_path(target)
        document = export_markdown(session.store)
        try:
            await asyncio.to_thread(path.write_text, document, encoding="utf-8")
        except OSError as err:
            return self.app.commands.refuse(f"/export cannot write {path}: {err.strerror or err}.")
        self.app.conversation.say(f"Exported this session as Markdown to {path}", "success")
        return True

    def _export_path(self, target: str) -> Path:
        session = self.app.session
        return session.env.workdir / Path(target or f"chimera-{session.id}.md").expanduser()

    def replay(self) -> None:
        """How to watch this session again: a replay is an app of its own, started from the shell."""
        replay = command("replay", self.app.session.id)
        self.app.conversation.say(
            f"To watch this session again, quit (ctrl+q) and run {replay}: p pauses, s steps, 1/2/3 set the speed."
        )
        self.app.copy_to_clipboard(replay.strip("`"))

    async def new(self) -> bool:
        """Close this session and open a fresh one in the same workspace, with the strategy, model and
        permission mode chosen now; the conversation starts empty."""
        app = self.app
        old = app.session
        options = replace(
            app.options,
            workdir=old.env.workdir,
            resume=None,
            model=old.model,
            loop=old.loop_name,
            permission_mode=old.policy.mode,
            workdir_from_session=False,
            accept_queued=False,
            drop_queued=False,
        )
        from chimera.core.sessions.start import start_session

        try:
            new = start_session(replace(options, interactive=True))
        except ChimeraError as err:
            return app.commands.refuse(f"/new cannot start a session: {err}")
        app.options, app.session = options, new
        await old.close()  # its bus closes: the bridge forwards what is left, then ends
        await app.conversation.bridged()
        app.call_later(self._show, new)  # after the old session's last events
        return True

    def _show(self, session: Session) -> None:
        app = self.app
        app.state.new_session()
        app.answers.show()
        app.conversation.show_status(
            model=session.model, loop=session.loop_name, strategy=session.loop_name, mode=session.policy.mode
        )
        app.conversation.redraw()
        app.conversation.show_bus(session.bus)
        # Its id names nothing yet: the session is kept (and listed, and resumed by it) from its first task on.
        app.conversation.say(f"A new session in {shown_path(session.env.workdir)}: it is kept once you send it a task.")
        if not app.query(Welcome):  # how to start, again, until its first task
            app.mount(Welcome.of(session, app.commands.facts()), before="#middle")
        app.show_keys()  # what works now is the empty session's (no tree to show yet)

    async def compare(self, argument: str) -> bool:
        """``/compare SPEC ...``: the person's last task again, as variants side by side from the point before it."""
        from chimera.core.compare import parse_specs, session_comparison
        from chimera.tui.screens.compare import CompareScreen

        app = self.app
        try:
            specs = parse_specs(argument.split())
            comparison = session_comparison(app.session, self._last_task(), specs)
        except ChimeraError as err:
            return app.commands.refuse(f"/compare: {err}")
        app.runs.running = True  # the session's other commands wait for the comparison, as for a run
        screen = CompareScreen(app.session, comparison, totals=app.state.status, clock=app.state.status.clock)
        await open_screen(app, screen, self._compared)
        return True

    def _last_task(self) -> str:
        """The node of the person's last message on the active path: the variants start just before it."""
        from chimera.core.sessions.reading import Task, read_node

        for node in reversed(self.app.session.store.tree.path()):
            reading = read_node(node)
            if node.kind == "user" and isinstance(reading, Task) and reading.text.strip():
                return node.id
        raise ConfigError("there is no task to run again: give Chimera a task first")

    def _compared(self, adopted: Adopted | None = None) -> None:
        self.app.runs.running = False
        self.app.conversation.show_status()  # its line shows the totals the variants added to
        self.app.prompt.focus()  # adopted or left: the next words are a task
        if adopted is not None:  # a switch like any other (/back undoes it); a task sent meanwhile waits for it
            self.app.session_tree.adopt(adopted.label, adopted.checkpoint)
