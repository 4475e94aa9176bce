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
        self.workspace = workspace
        self.folder = real_path(workspace)
        key = hashlib.sha256(str(self.folder).encode()).hexdigest()[:24]
        self.path = private_dir(home / "workspaces") / f"{key}.lock"
        self._fd: int | None = None  # the home's lock file
        self._folder_fd: int | None = None  # the workspace folder itself, when it can be opened

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
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                self._folder_fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            except OSError:  # gone or unreadable: whatever works there fails on its own; the home's lock holds
                self._folder_fd = None
        fcntl.flock(self._fd, flags)
        if self._folder_fd is not None:
            try:
                fcntl.flock(self._folder_fd, flags)
            except BlockingIOError:
                raise
            except OSError:  # this filesystem cannot lock a folder: the home's lock is all there is
                os.close(self._folder_fd)
                self._folder_fd = None

    def release(self) -> None:
        for fd in (self._folder_fd, self._fd):
            if fd is not None:
                os.close(fd)
        self._fd = self._folder_fd = None

    def __enter__(self) -> WorkspaceLock:
        return self

    def __exit__(self, *_: object) -> None:
        self.release()
