"""Provides taking a ``flock`` with a bounded wait that Ctrl-C ends (``take_lock``, ``lock_alone``), and
naming the processes that hold one (``lock_holders``).

No wait here blocks in the kernel: the lock is tried again every few milliseconds until the time is up,
so a holder that never lets go costs a bounded wait and a line naming it, never a hang. Ctrl-C ends the
wait at once: as ``KeyboardInterrupt`` where Python's own handler runs, and as ``CancelledError`` inside
a task of ``asyncio.run``, whose handler only cancels the task (a wait in plain code never gives the
event loop a turn to deliver that, so the wait looks for it itself).

The holders are read from Linux's ``/proc``: ``/proc/locks`` names the process that took each lock, and
a process's ``fdinfo`` the locks held through each of its descriptors (so a child that inherited the
descriptor of a holder that has ended is found too). Elsewhere, or where ``/proc`` tells nothing, the
holder is "another process".
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import time
from collections.abc import Callable, Iterator

__all__ = ["lock_alone", "lock_holders", "take_lock"]

_FIRST_PAUSE = 0.005  # seconds between tries at first; doubled up to _LONGEST_PAUSE
_LONGEST_PAUSE = 0.05
_SHOWN = 3  # holders named before the rest are counted
_COMMAND = 80  # characters of a holder's command line shown


def take_lock(fd: int, kind: int, seconds: float, worth_waiting: Callable[[], bool] = lambda: True) -> bool:
    """Take ``fd``'s ``flock`` of ``kind`` (``LOCK_SH`` or ``LOCK_EX``), trying again for up to ``seconds``
    while ``worth_waiting()`` says the holder may soon let go; whether it was taken.

    Ctrl-C ends the wait (KeyboardInterrupt, or CancelledError in a task of ``asyncio.run``: see above);
    an error other than the lock being held (a filesystem that cannot lock) is raised as it is."""
    deadline = time.monotonic() + seconds
    pause = _FIRST_PAUSE
    while True:
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            left = deadline - time.monotonic()
            if left <= 0 or not worth_waiting():
                return False
        _stop_if_cancelled()
        time.sleep(min(pause, left))
        pause = min(pause * 2, _LONGEST_PAUSE)


def lock_alone(fd: int, seconds: float, worth_waiting: Callable[[], bool] = lambda: True) -> bool:
    """``take_lock`` of ``fd``'s exclusive ``flock``."""
    return take_lock(fd, fcntl.LOCK_EX, seconds, worth_waiting)


def _stop_if_cancelled() -> None:
    """CancelledError when the task this runs in has been asked to stop (``asyncio.run`` does that on Ctrl-C)."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop runs in this thread
        return
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


def lock_holders(fd: int) -> str:
    """Who holds a ``flock`` on the file open at ``fd``, as ``pid N (its command)`` for each process
    (``, `` between them, the rest counted), or ``another process`` when it cannot be known."""
    try:
        info = os.fstat(fd)
    except OSError:
        return "another process"
    where = f"{os.major(info.st_dev):02x}:{os.minor(info.st_dev):02x}:{info.st_ino}"
    pids = [pid for pid in _takers(where) if _holds(pid, where) is not False]
    if not pids:  # the process that took it has ended (or /proc/locks is not there): who has its descriptor?
        pids = [pid for pid in _processes() if _holds(pid, where)]
    if not pids:
        return "another process"
    named = [f"pid {pid} ({_command(pid)})" for pid in pids[:_SHOWN]]
    more = f" and {len(pids) - _SHOWN} more" if len(pids) > _SHOWN else ""
    return ", ".join(named) + more


def _takers(where: str) -> list[int]:
    """The processes that took a ``flock`` granted on the file ``where`` (``major:minor:inode``), from
    ``/proc/locks`` (waiters left out); those that have ended included."""
    try:
        with open("/proc/locks", "rb") as fh:
            lines = fh.read().decode("ascii", "replace").splitlines()
    except OSError:
        return []
    pids = []
    for line in lines:
        parts = line.split()  # 1: FLOCK  ADVISORY  WRITE 7270 fe:00:2188245 0 EOF  (a waiter has "->" second)
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == where and parts[4].isdigit():
            pids.append(int(parts[4]))
    return list(dict.fromkeys(pids))


def _processes() -> Iterator[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return
    for name in names:
        if name.isdigit():
            yield int(name)


def _holds(pid: int, where: str) -> bool | None:
    """Whether a descriptor of process ``pid`` holds a lock on the file ``where``; None when its descriptors
    cannot be read (another user's process), False when it has none (or has ended)."""
    folder = f"/proc/{pid}/fdinfo"
    try:
        descriptors = os.listdir(folder)
    except PermissionError:
        return None
    except OSError:
        return False
    needle = f" {where} ".encode()
    for descriptor in descriptors:
        with contextlib.suppress(OSError):
            with open(f"{folder}/{descriptor}", "rb") as fh:
                text = fh.read()
            if any(line.startswith(b"lock:") and needle in line for line in text.splitlines()):
                return True
    return False


def _command(pid: int) -> str:
    """The command line of process ``pid`` (its name when the line is empty), cut to ``_COMMAND`` characters."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            line = b" ".join(part for part in fh.read().split(b"\0") if part)
        if not line:
            with open(f"/proc/{pid}/comm", "rb") as fh:
                line = fh.read().strip()
    except OSError:
        return "ended"
    text = " ".join(line.decode(errors="replace").split())
    return text if len(text) <= _COMMAND else text[: _COMMAND - 1] + "…"
