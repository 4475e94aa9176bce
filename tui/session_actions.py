"""Provides ``SessionActions``: the workbench's commands about the session itself.

``/sessions`` opens the session picker over the workbench (the session chosen opens next),
``/export [FILE]`` writes the session as Markdown and says
where, ``/replay`` says how to watch it again (``chimera replay ID``: a replay is an app of its own),
``/new`` closes the session and opens a fresh one in the same workspace with the same choices,
``/compare SPEC ...`` runs the last task again as variants side by side (``CompareScreen``).
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path

from chimera.core.compare import parse_specs, session_comparison
from chimera.core.errors import ChimeraError, ConfigError
from chimera.core.sessions.export import export_markdown
from chimera.core.sessions.reading import Task, read_node
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import start_session
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import command
from chimera.tui.command_actions import CommandActions
from chimera.tui.outside import tell
from chimera.tui.screens.compare import CompareScreen
from chimera.tui.screens.sessions import SessionPicker
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.widgets.welcome import Welcome

__all__ = ["SessionActions"]


class SessionActions(CommandActions):
    """``/sessions``, ``/export``, ``/replay``, ``/new`` and ``/compare``."""

    resume_next: str | None = None  # a session chosen with /sessions, opened when this one closes

    def action_sessions(self) -> None:
        """``/sessions``: the session picker over the workbench; the session chosen opens next."""
        self.push_screen(SessionPicker(self.session.env.workdir), self.resume_session)

    def resume_session(self, session_id: str | None) -> None:
        """The session picker's answer (``push_screen(SessionPicker(workdir), app.resume_session)``): close
        the workbench so that ``chimera`` opens ``session_id`` next. None, or this session: nothing changes."""
        if session_id is None or session_id == self.session.id:
            return
        if self.session.demo:
            tell(self, "Resuming a session needs a model: quit, set ANTHROPIC_API_KEY, and start again.", timeout=6)
            return
        if self.running:
            tell(self, "A run is going: interrupt it (escape) or let it finish, then choose again.", timeout=5)
            return
        self.resume_next = session_id
        self.exit()

    async def action_export(self, target: str) -> bool:
        """Write the session's active path as Markdown to ``target`` (the workspace's
        ``chimera-<id>.md`` by default; a relative path is taken in the workspace)."""
        path = self._export_path(target)
        document = export_markdown(self.session.store)
        try:
            await asyncio.to_thread(path.write_text, document, encoding="utf-8")
        except OSError as err:
            return self._refuse(f"/export cannot write {path}: {err.strerror or err}.")
        self.say(terminal_safe(f"Exported this session as Markdown to {path}", one_line=True), "success")
        return True

    def _export_path(self, target: str) -> Path:
        return self.session.env.workdir / Path(target or f"chimera-{self.session.id}.md").expanduser()

    def action_replay(self) -> None:
        """How to watch this session again: a replay is an app of its own, started from the shell."""
        replay = command("replay", self.session.id)
        self.say(
            f"To watch this session again, quit (ctrl+q) and run {replay}: p pauses, s steps, 1/2/3 set the speed."
        )
        self.copy_to_clipboard(replay.strip("`"))

    async def action_new(self) -> bool:
        """Close this session and open a fresh one in the same workspace, with the strategy, model and
        permission mode chosen now; the conversation starts empty."""
        old = self.session
        options = replace(
            self.options,
            workdir=old.env.workdir,
            resume=None,
            model=old.model,
            loop=old.loop_name,
            permission_mode=old.policy.mode,
            workdir_from_session=False,
            accept_queued=False,
            drop_queued=False,
        )
        try:
            new = start_session(replace(options, interactive=True))
        except ChimeraError as err:
            return self._refuse(f"/new cannot start a session: {err}")
        self.options, self.session = options, new
        await old.close()  # its bus closes: the bridge forwards what is left, then ends
        await self.bridged()
        self.call_later(self._show_session, new)  # after the old session's last events
        return True

    def _show_session(self, session: Session) -> None:
        self.state.new_session()
        self.show_questions()
        self.show_status(model=session.model, loop=session.loop_name, mode=session.policy.mode)
        self.query_one(TranscriptView).refresh_entries()
        self.show_bus(session.bus)
        self.say(f"New session {session.id} in {terminal_safe(str(session.env.workdir), one_line=True)}")
        if not self.query(Welcome):  # how to start, again, until its first task
            self.mount(Welcome.of(session, self.facts()), before="#middle")

    def action_compare(self, argument: str) -> bool:
        """``/compare SPEC ...``: the person's last task again, as variants side by side from the point before it."""
        try:
            specs = parse_specs(argument.split())
            comparison = session_comparison(self.session, self._last_task(), specs)
        except ChimeraError as err:
            return self._refuse(f"/compare: {err}")
        self.running = True  # the session's other commands wait for the comparison, as for a run
        self.push_screen(CompareScreen(self.session, comparison, clock=self.state.status.clock), self._compared)
        return True

    def _last_task(self) -> str:
        """The node of the person's last message on the active path: the variants start just before it."""
        for node in reversed(self.session.store.tree.path()):
            reading = read_node(node)
            if node.kind == "user" and isinstance(reading, Task) and reading.text.strip():
                return node.id
        raise ConfigError("there is no task to run again: give Chimera a task first")

    def action_interrupt(self) -> None:
        """While a comparison runs, interrupting stops every variant (each ends as stopped); else the run."""
        if isinstance(self.screen, CompareScreen):
            self.screen.comparison.stop()
            tell(self, "Stopping every variant…", timeout=2)
            return
        super().action_interrupt()

    def _compared(self, _: None = None) -> None:
        self.running = False
