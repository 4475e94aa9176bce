"""Provides ``confirm_received``: the question the workbench asks before it resumes a session it did not record.

A session this Chimera did not write (received from someone, or edited by hand:
see ``chimera.core.sessions.received``) may name a folder to work in other than
the current one and hold words queued for the next run. Before the workbench
opens such a session, the terminal shows both, every queued message in full,
and asks; headless, ``chimera run`` refuses instead, naming the flags.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TextIO

from chimera.core.sessions.start import RunOptions, unconfirmed

__all__ = ["confirm_received"]


def confirm_received(options: RunOptions, out: TextIO) -> RunOptions | None:
    """Show what the session ``options`` resume holds that this Chimera did not write, and ask at the terminal.

    The options with the person's answers (the folder confirmed, the queued words run or discarded);
    None when they said no to the folder (nothing ran).
    """
    pending = unconfirmed(options)
    if not pending:
        return options
    out.write("".join(f"{text}\n" for text in pending.questions()))
    if pending.workdir is not None:
        if not _yes(out, "Let the agent work in that folder? [y/N] "):
            out.write("Not resumed: nothing ran.\n")
            return None
        options = replace(options, workdir_from_session=True)
    if pending.queued:
        run = _yes(out, "Run the queued messages? (no discards them) [y/N] ")
        options = replace(options, accept_queued=run, drop_queued=not run)
    return options


def _yes(out: TextIO, question: str) -> bool:
    out.write(question)
    out.flush()
    try:
        return input().strip().lower() in {"y", "yes"}
    except EOFError:
        return False
