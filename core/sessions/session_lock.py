"""Provides ``hold_session``: the lock that keeps a session to one writing Chimera at a time.

A session folder has a ``lock`` file. The Chimera that writes to the session holds an exclusive
``flock`` on it and has written its pid there. The kernel lets the lock go when the last descriptor
of it closes, so a Chimera killed with SIGKILL leaves nothing to clean up, with one gap: a child it
was forking to start a command holds a copy of every descriptor until it executes the command (they
are close-on-exec, so they go then). For that moment the lock outlives its holder. So when the pid
in the file has ended, the lock is waited for (``GRACE`` seconds at most) before it counts as held,
and then the refusal says the holder has ended and names what holds the lock (``locks.lock_holders``).
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.sessions.files import LOCK, open_file
from chimera.core.sessions.locks import lock_alone, lock_holders

__all__ = ["GRACE", "hold_session"]

GRACE = 2.0  # seconds a lock whose holder has ended may take to come free
_POLL = 0.01


def hold_session(folder: Path, session_id: str) -> int:
    """The descriptor of ``folder``'s lock, held, with this process's pid written in it.

    ConfigError naming the holder when another process holds it."""
    fd = open_file(folder, LOCK, os.O_RDWR | os.O_CREAT)
    try:
        _take(fd, folder, session_id)
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _take(fd: int, folder: Path, session_id: str) -> None:
    holder = ""

    def ended() -> bool:  # the pid in the file has ended: its lock is about to come free
        nonlocal holder
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
        return _ended(holder)

    if lock_alone(fd, GRACE, ended):
        return
    if _ended(holder):
        found = lock_holders(fd)
        who = f"a process it started ({found}) holds {folder / LOCK}"
        if found == "another process":
            who = f"a process it started holds {folder / LOCK} (`fuser {folder / LOCK}` names it)"
        raise ConfigError(
            f"session {session_id} is still locked, though the Chimera that opened it (pid {holder}) has ended: "
            f"{who}: end that process"
        )
    raise ConfigError(
        f"session {session_id} is open in another Chimera (pid {holder}): close it there first, or, in its "
        "workbench, use /switch, /branch, /checkpoint or /label (/tree shows the points)"
    )


def _ended(holder: str) -> bool:
    """Whether the process ``holder`` (a pid, as the lock file says) has ended; False when unsure."""
    if not holder.isdigit():
        return False
    try:
        os.kill(int(holder), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):  # another user's process; a pid no process could have
        return False
    return False
