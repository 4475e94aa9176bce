"""Provides ``WorkspaceLock``: sessions working in one folder see each other.

Runs hold the workspace's lock shared, so several may work side by side; a
switch, which rewrites files, needs it alone and is refused while any run in
that folder is going. The lock files live under ``CHIMERA_HOME/workspaces``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.home import private_dir
from chimera.core.tools.paths import real_path

__all__ = ["WorkspaceLock"]


class WorkspaceLock:
    """A lock on ``workspace``: ``shared()`` for a run, ``exclusive()`` for a switch."""

    def __init__(self, home: Path, workspace: Path) -> None:
        key = hashlib.sha256(str(real_path(workspace)).encode()).hexdigest()[:24]
        self.workspace = workspace
        self.path = private_dir(home / "workspaces") / f"{key}.lock"
        self._fd: int | None = None

    def shared(self) -> WorkspaceLock:
        """Hold the lock with other runs; a switch in progress makes this wait for it to finish."""
        self._take(fcntl.LOCK_SH)
        return self

    def exclusive(self) -> WorkspaceLock:
        """Hold the lock alone, or raise ConfigError when a run works in the folder."""
        try:
            self._take(fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            raise ConfigError(
                f"another Chimera run is working in {self.workspace}: let it finish (or quit it) before switching"
            ) from None
        return self

    def _take(self, flags: int) -> None:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self._fd, flags)

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WorkspaceLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
