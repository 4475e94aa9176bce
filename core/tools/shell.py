"""Provides ``start_shell``: a bash call's ``bash -c`` command, started so that nothing it starts outlives the call.

On Linux the command runs under a small supervisor process (``supervisor.py``), one
per call, which is a child subreaper: every process the command starts stays below
it whatever it does to its process group or session (``setsid -f``, a double fork,
``nohup … &``). When the shell exits, when :meth:`Shell.kill` is called, or when
Chimera dies (even by SIGKILL, which closes the supervisor's control pipe), the
supervisor kills all of them. Elsewhere the shell leads a process group of its own
that is killed at the end, and :mod:`watchdog` kills it if Chimera dies: a process
that leaves the group can outlive the call there.

Either way stdout and stderr share one pipe, in the order written, and stdin is empty.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Protocol

from chimera.core.tools import watchdog

__all__ = ["Shell", "can_supervise", "start_shell"]

_SUPERVISOR = str(Path(__file__).with_name("supervisor.py"))
# The shell waits at this gate until its group is in the watchdog's list, then becomes the
# command's shell (same pid, same group). If Chimera dies first, the gate reads EOF and the
# command never starts: there is no moment at which it runs unwatched.
_GATE = 'IFS= read -r -u {fd} _ || exit 125; exec {fd}<&-; exec bash -c "$1"'


class Shell(Protocol):
    """A running command: its merged output, its end, and a way to end it early."""

    output: IO[bytes]
    note: str  # set by wait() when something went wrong beyond the command itself

    def wait(self) -> int:
        """Block until the command and everything it started are over; the shell's exit code (-N: signal N)."""
        ...

    def kill(self) -> None:
        """End the command and every process it started, at once; returns without waiting."""
        ...

    def force(self) -> None:
        """Kill what is left from here, when ending it the usual way did not finish in time; returns at once."""
        ...

    def close(self) -> None:
        """Release what is left once :meth:`wait` has returned."""
        ...


def start_shell(command: str, cwd: Path, env: dict[str, str], sandbox: str = "") -> Shell:
    """Start ``bash -c command`` in ``cwd`` with ``env``, stdin empty and stdout and stderr on ``output``.

    ``sandbox``: the Landlock rules to confine the command to (``Confinement.spec``), applied by its
    supervisor; empty for none. Rules given where there is no supervisor raise RuntimeError: a command
    meant to be confined never runs unconfined.
    """
    if can_supervise():
        return _Supervised(command, cwd, env, sandbox)
    if sandbox:
        raise RuntimeError("the sandbox needs the supervisor, which this system cannot run")
    return _Grouped(command, cwd, env)


@functools.cache
def can_supervise() -> bool:
    """Linux, with pidfds (5.3 and later) and /proc, and a Python to run the supervisor."""
    if not sys.platform.startswith("linux") or not sys.executable or not os.path.isdir("/proc/self"):
        return False
    try:
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError):
        return False
    return True


_FORCE_ROUNDS = 100  # sweeps of the supervisor's descendants before it is killed anyway (a fork bomb)
_controls: set[IO[bytes]] = set()  # the control pipes of running supervisors, in this process


def _forked() -> None:
    """In a child forked without exec: let go of the control pipes, or the calls could never be ended."""
    for control in list(_controls):
        with contextlib.suppress(OSError):
            control.close()
    _controls.clear()


os.register_at_fork(after_in_child=_forked)


class _Supervised:
    """The command under a per-call supervisor that kills all its descendants (Linux)."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str], sandbox: str = "") -> None:
        rules = _rules_file(sandbox) if sandbox else None  # the supervisor reads them from there, then closes it
        reader, writer = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-S", _SUPERVISOR, str(writer), command, *([str(rules)] if rules else [])],
                cwd=cwd,
                stdin=subprocess.PIPE,  # the control pipe: closing it ends the command
                stdout=subprocess.PIPE,  # the report
                stderr=subprocess.STDOUT,
                start_new_session=True,  # a ctrl+c to the terminal's group must not reach it
                env=env,
                pass_fds=(writer,) if rules is None else (writer, rules),
            )
        except BaseException:
            os.close(reader)
            raise
        finally:
            os.close(writer)
            if rules is not None:
                os.close(rules)
        self.output: IO[bytes] = open(reader, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        self.note = ""
        assert self._proc.stdin is not None
        self._control = self._proc.stdin
        _controls.add(self._control)
        self._lock = threading.Lock()
        self._code: int | None = None
        self._forced = False

    def kill(self) -> None:
        _controls.discard(self._control)
        with contextlib.suppress(OSError):
            self._control.close()
        with contextlib.suppress(OSError):
            self._proc.send_signal(signal.SIGCONT)  # in case the command stopped its supervisor

    def force(self) -> None:
        """The supervisor did not end the command in time (it is stopped again and again): kill all of it from here.

        Every process below the supervisor is killed (a stopped one too) until none is
        left alive, then the supervisor itself; none of them can stop Chimera's kill.
        """
        self._forced = True
        pid = self._proc.pid
        for _ in range(_FORCE_ROUNDS):
            if self._proc.returncode is not None:
                return  # it finished after all (and its pid may belong to another process now)
            alive = _alive_below(pid)
            if not alive:
                break
            for child in alive:
                with contextlib.suppress(OSError):
                    os.kill(child, signal.SIGKILL)
        with contextlib.suppress(OSError):
            self._proc.kill()

    def wait(self) -> int:
        with self._lock:
            if self._code is None:
                self._code = self._finish()
            return self._code

    def _await_supervisor(self) -> int:
        """The supervisor's exit status, once it exits; whenever it is stopped meanwhile, it is continued."""
        pid = self._proc.pid
        while self._proc.returncode is None:
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WSTOPPED | os.WNOWAIT)
            except ChildProcessError:
                break  # reaped already
            except InterruptedError:
                continue
            if info is None or info.si_code not in (os.CLD_STOPPED, os.CLD_TRAPPED):
                break
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGCONT)  # a command stopped it (`kill -STOP $PPID`): it has work to do
        return self._proc.wait()

    def _finish(self) -> int:
        own = self._await_supervisor()
        assert self._proc.stdout is not None
        report = self._proc.stdout.read().decode("utf-8", "replace").splitlines()
        words = dict(line.partition(" ")[::2] for line in report)
        if "exit" in words:
            return int(words["exit"])
        if "signal" in words:
            return -int(words["signal"])
        if "error" in words:
            self.note = words["error"]
            return 127
        if "pid" in words:  # the supervisor itself was killed: end the shell's group at least
            with contextlib.suppress(OSError):
                os.killpg(int(words["pid"]), signal.SIGKILL)
        if self._forced:
            self.note = "the command kept stopping its supervisor, so Chimera killed it and every process below it"
            return -signal.SIGKILL
        how = f"was killed by signal {-own}" if own < 0 else f"failed: {report[-1] if report else own}"
        self.note = f"the command's supervisor {how}; processes that left the command's group may still run"
        return own if own else 1

    def close(self) -> None:
        self.kill()
        for stream in (self.output, self._proc.stdout):
            if stream is not None:
                stream.close()


def _rules_file(spec: str) -> int:
    """A descriptor of an anonymous file holding ``spec``, read from its start (the rules can outgrow a pipe)."""
    fd = os.memfd_create("chimera-sandbox-rules", os.MFD_CLOEXEC)
    try:
        os.write(fd, spec.encode("utf-8", "surrogateescape"))  # a memfd takes it all at once
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _alive_below(root: int) -> list[int]:
    """Every live process below ``root`` (zombies left out), parents before their children."""
    children: dict[int, list[int]] = {}
    dead: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # it ended meanwhile
        state, parent = stat[stat.rindex(b")") + 2 :].split(maxsplit=2)[:2]
        children.setdefault(int(parent), []).append(int(name))
        if state in (b"Z", b"X"):
            dead.add(int(name))
    found: list[int] = []
    todo = [root]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return [pid for pid in found if pid not in dead]


class _Grouped:
    """The command's shell leads a process group of its own, watched by :mod:`watchdog` (not Linux)."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        watchdog.start()
        gate, opener = os.pipe()
        try:
            self._proc = subprocess.Popen(
                ["bash", "-c", _GATE.format(fd=gate), "bash", command],
                cwd=cwd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
                pass_fds=(gate,),
            )
        except BaseException:
            os.close(opener)
            raise
        finally:
            os.close(gate)
        watchdog.watch(self._proc.pid)  # killed even if Chimera itself is killed mid-call
        with contextlib.suppress(OSError):
            os.write(opener, b"go\n")
        os.close(opener)
        assert self._proc.stdout is not None
        self.output = self._proc.stdout
        self.note = ""

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)

    def force(self) -> None:
        self.kill()  # SIGKILL to the group already ends stopped processes too

    def wait(self) -> int:
        return self._proc.wait()

    def close(self) -> None:
        watchdog.forget(self._proc.pid)  # the group is killed, so its id must leave the list
        self.output.close()
