"""Watching processes end: a subreaper fixture that proves a pid was killed, not left running."""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
from collections.abc import Iterator

import pytest

# Orphaned processes are reparented to PID 1, which here never reaps them, so a killed
# orphan would stay a zombie and `os.kill(pid, 0)` would still succeed. Becoming a child
# subreaper for the test makes orphans our children: we reap them and read how they died.
_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


class Reaper:
    def __init__(self) -> None:
        self.pids: list[int] = []

    def assert_killed(self, pid: int) -> None:
        """``pid`` was killed (SIGKILL), not left running; afterwards it no longer exists."""
        self.pids.append(pid)
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            fd = None
        if fd is not None:
            try:
                ready, _, _ = select.select([fd], [], [], 10)  # an event wait, not a sleep
            finally:
                os.close(fd)
            if not ready:
                pytest.fail(f"process {pid} is still running after the call returned")
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                return  # it ended, and not as our child: its own parent (a bash call's supervisor) reaps it
            assert os.WIFSIGNALED(status), f"process {pid} exited on its own (status {status})"
            assert os.WTERMSIG(status) == signal.SIGKILL
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)

    def reap(self, pid: int) -> None:
        """Wait for ``pid`` to end (whatever ended it) and reap it if it became our child."""
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            return
        try:
            ready, _, _ = select.select([fd], [], [], 10)  # an event wait, not a sleep
        finally:
            os.close(fd)
        if not ready:
            pytest.fail(f"process {pid} is still running")
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)

    def cleanup(self) -> None:
        """Kill and reap what a failed test left behind: only our own unreaped children."""
        for pid in self.pids:
            try:
                if os.waitpid(pid, os.WNOHANG) == (0, 0):
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
            except ChildProcessError:
                pass  # reaped already (or never ours): its pid may belong to someone else now


@contextlib.contextmanager
def subreaper() -> Iterator[Reaper]:
    """Orphans of our descendants become our children while this is open, so we can reap them."""
    if not sys.platform.startswith("linux"):
        pytest.skip("checking for killed processes uses Linux's prctl and pidfd")
    previous = ctypes.c_int()
    assert _libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(previous), 0, 0, 0) == 0
    assert _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    r = Reaper()
    try:
        yield r
    finally:
        _libc.prctl(_PR_SET_CHILD_SUBREAPER, previous.value, 0, 0, 0)
        r.cleanup()
