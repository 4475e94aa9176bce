"""Provides ``WorkspaceLock``: sessions working in one folder see each other, whichever Chimera home they keep.

Runs hold the workspace's lock shared, so several may work side by side; a
switch, which rewrites files, needs it alone and is refused while any run in
that folder is going.

The lock is taken on the workspace folder itself (``flock`` on the folder,
opened read-only), so two Chimeras with different ``CHIMERA_HOME`` exclude
each other as two of one home do; nothing is written into the workspace (no
file to see, commit or ignore, and a read-only workspace locks as well), and
the folder's contents, ``.git`` and the shadow repository's view are never
touched. A lock file under ``CHIMERA_HOME/workspaces`` is held too, as before:
on a filesystem that cannot lock a folder (some network filesystems), runs of
one home still exclude each other's switches.

Any process may lock the folder (a switch of another Chimera, a script's
``flock``), so a run never waits for the lock without end: after ``WAIT``
seconds (or the run's own time limit, if shorter) it gives up with one line
naming the holder, pid and command (``locks.lock_holders``); Ctrl-C ends the
wait at once. A front end that stays on screen meanwhile (the workbench) passes a ``LockWait``: it is told
who holds the folder as the wait begins, and can end the wait at once (the person quit).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.home import private_dir
from chimera.core.sessions.locks import lock_holders, take_lock
from chimera.core.tools.paths import real_path

__all__ = ["WAIT", "LockWait", "WorkspaceLock"]

WAIT = 10.0  # seconds a run waits for a workspace another process holds alone (a switch rewriting files)


@dataclass(frozen=True, slots=True)
class LockWait:
    """How a front end follows a wait for a workspace another process holds: ``told(workspace, holders)`` is
    called once, from the thread that waits, as the wait begins (``holders`` as ``locks.lock_holders`` names
    them); setting ``stop`` ends the wait at once, with ConfigError (the front end is closing)."""

    told: Callable[[Path, str], None]
    stop: threading.Event = field(default_factory=threading.Event)


class WorkspaceLock:
    """A lock on ``workspace``: ``shared()`` for a run, ``exclusive()`` for a switch."""

    def __init__(self, home: Path, workspace: Path) -> None:
        self.workspace = workspace
        self.folder = real_path(workspace)
        key = hashlib.sha256(str(self.folder).encode()).hexdigest()[:24]
        self.path = private_dir(home / "workspaces") / f"{key}.lock"
        self._fd: int | None = None  # the home's lock file
        self._folder_fd: int | None = None  # the workspace folder itself, when it can be opened

    def shared(self, time_limit: float | None = None, waiting: LockWait | None = None) -> WorkspaceLock:
        """Hold the lock with other runs. While another process holds it alone (a switch rewriting files),
        wait for it up to ``WAIT`` seconds, or ``time_limit`` (the run's wall-time limit) when shorter;
        then ConfigError naming the holder. Ctrl-C ends the wait (see ``locks.take_lock``), and so does
        ``waiting.stop``; ``waiting`` is told of the wait as it begins."""
        wait = WAIT if time_limit is None else min(WAIT, time_limit)
        held = self._take(fcntl.LOCK_SH, 0.0 if waiting is not None else wait)
        if held is not None and waiting is not None:
            waiting.told(self.workspace, lock_holders(held))
            held = self._take(fcntl.LOCK_SH, wait, lambda: not waiting.stop.is_set())
            if held is not None and waiting.stop.is_set():
                self.release()
                raise ConfigError(f"the wait for the workspace {self.workspace} was given up")
        if held is not None:
            holders = lock_holders(held)
            self.release()
            when = (
                f"still at the wall-time limit of {wait:g}s: let it finish (or end it), or raise --max-time"
                if wait < WAIT
                else f"still after {wait:g} s: let it finish (or end it), then try again"
            )
            raise ConfigError(f"the workspace {self.workspace} is locked by {holders}, {when}")
        return self

    def exclusive(self) -> WorkspaceLock:
        """Hold the lock alone, or raise ConfigError naming what works in the folder (a run, any process)."""
        held = self._take(fcntl.LOCK_EX, 0.0)
        if held is not None:
            holders = lock_holders(held)
            self.release()
            raise ConfigError(
                f"another process is working in {self.workspace} ({holders}): let it finish (or quit it) "
                "before switching"
            )
        return self

    def _take(self, kind: int, wait: float, worth_waiting: Callable[[], bool] = lambda: True) -> int | None:
        """Take both locks of ``kind``, waiting ``wait`` seconds at most (while ``worth_waiting()``): None, or
        the descriptor whose lock another process holds."""
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                self._folder_fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:  # gone or unreadable: whatever works there fails on its own; the home's lock holds
                self._folder_fd = None
        deadline = time.monotonic() + wait
        if not take_lock(self._fd, kind, wait, worth_waiting):
            return self._fd
        if self._folder_fd is not None:
            try:
                if not take_lock(self._folder_fd, kind, max(0.0, deadline - time.monotonic()), worth_waiting):
                    return self._folder_fd
            except OSError:  # this filesystem cannot lock a folder: the home's lock is all there is
                os.close(self._folder_fd)
                self._folder_fd = None
        return None

    def release(self) -> None:
        for fd in (self._folder_fd, self._fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._folder_fd = None

    def __enter__(self) -> WorkspaceLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
