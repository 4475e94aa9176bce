"""Kills the process groups of running bash calls when Chimera dies without cleaning up.

The bash tool kills its group whenever a call ends, times out or is cancelled;
a SIGKILL, though, gives Chimera no chance to. So the first bash call starts
one small watcher process that holds the read end of a pipe: Chimera writes
``+PGID`` when a group starts and ``-PGID`` when it is gone. When the pipe
closes, however Chimera exited, the kernel closes the write end and the
watcher kills every group still listed, background children included.

On Linux the bash tool does not need it: each call's supervisor (see
``shell.py``) notices Chimera's death itself and kills more than a group.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import subprocess
import sys
import threading
from typing import IO

from chimera.core.credentials import clean_environment

__all__ = ["forget", "start", "watch"]

_WATCHER = """# chimera: kills the command groups listed on stdin once stdin closes
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    sign, pgid = line[0], int(line[1:])
    if sign == "+":
        groups.add(pgid)
    else:
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_lock = threading.Lock()
_pipe: IO[str] | None = None
_watcher: subprocess.Popen[str] | None = None  # kept so it is not collected while it runs
_owner = 0  # the pid that started the watcher: a forked child must not share it


def _forked() -> None:
    """In a child forked without exec: let go of the parent's watcher, or it would outlive the parent."""
    global _lock, _pipe, _watcher
    _lock = threading.Lock()  # another thread may have held it at the fork
    if _pipe is not None:
        with contextlib.suppress(OSError):
            _pipe.close()
    _pipe = _watcher = None


os.register_at_fork(after_in_child=_forked)


def start() -> None:
    """Have the watcher running, so that :func:`watch` right after a spawn is one small write."""
    with _lock:
        if _owner != os.getpid():
            _start()


def watch(pgid: int) -> None:
    """Have ``pgid`` killed if this process dies before :func:`forget` is called for it."""
    _send(f"+{pgid}\n")


def forget(pgid: int) -> None:
    """``pgid`` is gone (or was killed by its call): the watcher need not kill it."""
    _send(f"-{pgid}\n")


def _send(line: str) -> None:
    with _lock:
        pipe = _pipe if _owner == os.getpid() else _start()
        if pipe is None:
            return
        try:
            pipe.write(line)
            pipe.flush()
        except OSError:
            _drop()  # the watcher is gone; calls still clean up after themselves


def _start() -> IO[str] | None:
    global _pipe, _owner, _watcher
    _owner = os.getpid()
    try:
        _watcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHER],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # a ctrl+c to the terminal's group must not reach it
            text=True,
            env=clean_environment(),
        )
    except OSError:
        _pipe = None
        return None
    _pipe = _watcher.stdin
    atexit.register(_stop)
    return _pipe


def _stop() -> None:
    """At a normal exit: close the pipe (the watcher kills what is left, if anything) and reap it."""
    with _lock:
        watcher = _watcher if _owner == os.getpid() else None
        _drop()
    if watcher is not None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            watcher.wait(timeout=2)


def _drop() -> None:
    global _pipe
    if _pipe is not None:
        with contextlib.suppress(OSError):
            _pipe.close()
    _pipe = None
