"""Provides ``SessionActions``: the workbench's commands about the session itself.

``/sessions`` lists this workspace's newest sessions (a notice; a session picker is to replace
:meth:`SessionActions.action_sessions`), ``/export [FILE]`` writes the session as Markdown and says
where, ``/replay`` says how to watch it again (``chimera replay ID``: a replay is an app of its own),
``/new`` closes the session and opens a fresh one in the same workspace with the same choices.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import replace
from pathlib import Path

from textual import work

from chimera.core.errors import ChimeraError
from chimera.core.home import chimera_home
from chimera.core.sessions.export import export_markdown
from chimera.core.sessions.listing import SessionInfo, list_sessions
from chimera.core.sessions.session import Session
from chimera.core.sessions.start import start_session
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import command
from chimera.tui.command_actions import CommandActions
from chimera.tui.widgets.transcript_view import TranscriptView

__all__ = ["SESSIONS_LISTED", "SessionActions"]

SESSIONS_LISTED = 10  # sessions /sessions names, newest first


class SessionActions(CommandActions):
    """``/sessions``, ``/export``, ``/replay`` and ``/new``."""

    @work(group="sessions", exclusive=True, exit_on_error=False)
    async def action_sessions(self) -> None:
        """The newest sessions of this workspace, as a notice in the conversation."""
        found = await asyncio.to_thread(list_sessions, chimera_home())
        workdir = str(self.session.store.workdir)
        here = [info for info in found if info.workdir == workdir][:SESSIONS_LISTED]
        lines = [f"Sessions in {workdir}, newest first (`chimera --resume ID` opens one):"]
        lines += [self._session_line(info) for info in here]
        self.say("\n".join(terminal_safe(line, one_line=True) for line in lines))

    def _session_line(self, info: SessionInfo) -> str:
        when = dt.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        ended = f" · last run {info.ended.brief}" if info.ended is not None else ""
        this = " (this one)" if info.id == self.session.id else ""
        return f"  {info.id}  {when}  {info.title or '(no task yet)'}{ended}{this}"

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
