"""Provides the API credentials: moved out of the process environment before anything runs, held in memory only.

A process's starting environment stays readable in ``/proc/<pid>/environ`` for
its whole life, whatever ``os.environ`` says later, and a process of the same
user can read it: a command run by Chimera looking at its parent, for one. So
the ``chimera`` command, when it starts with ``ANTHROPIC_API_KEY`` or
``ANTHROPIC_AUTH_TOKEN`` set, writes them into a pipe, executes itself again
without them (same pid, same arguments; only the pipe's descriptor number in
``CHIMERA_CREDENTIALS_FD``), and reads them back from the pipe once: the
environment the kernel shows for Chimera never held them. It then makes itself
non-dumpable (``PR_SET_DUMPABLE`` 0), so a process of the same user without
``CAP_SYS_PTRACE`` cannot read its memory (``/proc/<pid>/mem``, a debugger) or
its ``/proc`` files either. The cost: no core dumps, and attaching a debugger or
``py-spy`` to a running Chimera that holds a key needs root.

Only the ``chimera`` command does this (:func:`take_from_environment`); Chimera
used as a library reads the variables as they are (:func:`get`). Every process
Chimera starts gets :func:`clean_environment` (or less).
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import sys
from collections.abc import Mapping

__all__ = ["HANDOVER_VAR", "SECRET_VARS", "clean_environment", "get", "take_from_environment", "values"]

SECRET_VARS = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
HANDOVER_VAR = "CHIMERA_CREDENTIALS_FD"
_PIPE_MAX = 60_000  # what a pipe holds unread on every platform (64 KiB on Linux): more would block the write
_PR_SET_DUMPABLE = 4

_held: dict[str, str] = {}


def get(name: str) -> str | None:
    """The credential ``name`` (one of ``SECRET_VARS``): the one handed over at start-up, else the environment's."""
    return _held.get(name) or os.environ.get(name) or None


def values() -> tuple[str, ...]:
    """Every credential value this process knows: the ones to mask wherever they might leave it."""
    return tuple(value for name in SECRET_VARS if (value := get(name)))


def clean_environment(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """``environ`` (default: this process's) without the credentials and the hand-over variable."""
    source = os.environ if environ is None else environ
    return {k: v for k, v in source.items() if k not in SECRET_VARS and k != HANDOVER_VAR}


def take_from_environment() -> None:
    """For the ``chimera`` command, before anything else: have no credential in this process's environment.

    With a credential in the environment, this executes the same command again with
    the credentials in a pipe instead, and does not return. In the new process (or
    if executing failed) the credentials are held in memory, out of ``os.environ``,
    and the process is made non-dumpable.
    """
    if HANDOVER_VAR in os.environ:
        _receive(os.environ.pop(HANDOVER_VAR))
    found = {name: os.environ[name] for name in SECRET_VARS if os.environ.get(name)}
    if found and not _held:
        with contextlib.suppress(OSError, ValueError):
            _execute_without(found)  # returns only if it could not
    for name in SECRET_VARS:
        value = os.environ.pop(name, None)
        if value and name not in _held:
            _held[name] = value
    if _held:
        _protect()


def _execute_without(found: dict[str, str]) -> None:
    """Execute this command again with ``found`` in a pipe instead of the environment."""
    payload = json.dumps(found).encode()
    argv = list(getattr(sys, "orig_argv", []))
    if len(payload) > _PIPE_MAX or not sys.executable or not argv:
        raise ValueError("cannot hand the credentials over")
    read, write = os.pipe()
    try:
        if read < 3:  # never hand over on a standard stream's number
            moved = fcntl.fcntl(read, fcntl.F_DUPFD, 3)
            os.close(read)
            read = moved
        view = memoryview(payload)
        while view:
            view = view[os.write(write, view) :]
        os.close(write)
        write = -1
        os.set_inheritable(read, True)
        env = clean_environment()
        env[HANDOVER_VAR] = str(read)
        sys.stdout.flush()
        sys.stderr.flush()
        os.execve(sys.executable, argv, env)
    finally:
        if write != -1:
            os.close(write)
        with contextlib.suppress(OSError):
            os.close(read)


def _receive(text: str) -> None:
    """Read the credentials from the inherited pipe numbered ``text``, once, and close it."""
    try:
        fd = int(text)
    except ValueError:
        return
    if fd < 3:
        return
    try:
        if not stat.S_ISFIFO(os.fstat(fd).st_mode):
            return
        os.set_blocking(fd, False)  # everything was written before the exec: never wait for more
        data = b""
        with contextlib.suppress(BlockingIOError):
            while chunk := os.read(fd, 65536):
                data += chunk
    except OSError:
        return
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    try:
        parsed = json.loads(data)
    except ValueError:
        return
    if isinstance(parsed, dict):
        _held.update({k: v for k, v in parsed.items() if k in SECRET_VARS and isinstance(v, str) and v})


def _protect() -> None:
    """Make this process non-dumpable: same-user processes cannot read its memory or its /proc files."""
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
