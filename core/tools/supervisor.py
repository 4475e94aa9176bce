"""Provides the process a bash call's command runs under on Linux, so nothing the command starts outlives it.

The bash tool runs ``python -I -S supervisor.py FD COMMAND`` in a session of its own,
with the call's control pipe as stdin and a report pipe as stdout and stderr. The
supervisor makes itself a child subreaper, so every process the command orphans (a
``setsid -f``, a double fork, ``nohup … &``, a daemon that closed its files) becomes its
child rather than init's. It starts ``bash -c COMMAND`` in a new session, stdin from
/dev/null, stdout and stderr on FD, and waits until the shell exits or the control pipe
closes (the call ended, timed out or was cancelled, or Chimera died, even by SIGKILL:
the kernel closes the pipe). Then it kills every process descended from it, reaps them
all, reports and exits.

Given a third argument, a file descriptor holding the Landlock rules of the sandbox (a memfd:
``sandbox/policy.py`` writes them), it confines
itself to them before it starts the shell (``sandbox/landlock.py``), so the shell and all it
starts are confined; it stays in the same Landlock domain as they, so it can still signal and
reap them all. If the rules cannot be applied, the command does not run.

The report is a line ``pid N`` once the shell runs, then ``exit N`` or ``signal N``
for how the shell ended (or ``error …`` if it could not start).

The signals a command could stop it with are ignored, but for SIGSTOP, which cannot
be: Chimera, its parent, continues it whenever it stops, and the kernel sends it
SIGCONT when Chimera dies (``PR_SET_PDEATHSIG``), so it always gets to do its killing.

It starts with every call, so it imports only modules loaded at startup or written in
C: ``posix``, ``_signal`` and ``_ctypes`` do what ``os``, ``signal`` and ``ctypes`` do
here, which would cost 10 ms more a call (``signal`` alone imports enum).
"""

import _signal  # type: ignore[import-not-found]  # the C half of `signal`, which has no stub of its own
import posix as os  # `os` itself costs 1.5 ms to import; `posix` is already loaded
import select
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
# Ignored here (a stray `kill $PPID` must not end or stop the supervisor), and set back to
# their defaults in the shell, with the two Python itself ignores (SIGPIPE, SIGXFSZ).
_IGNORED = (
    _signal.SIGHUP,
    _signal.SIGINT,
    _signal.SIGQUIT,
    _signal.SIGUSR1,
    _signal.SIGUSR2,
    _signal.SIGTERM,
    _signal.SIGTSTP,
    _signal.SIGTTIN,
    _signal.SIGTTOU,
)
_DEFAULTS = (*_IGNORED, _signal.SIGPIPE, _signal.SIGXFSZ)


def main() -> None:
    out, command = int(sys.argv[1]), sys.argv[2]
    if len(sys.argv) > 3:
        failed = _confine(int(sys.argv[3]))
        if failed:
            _report(f"error the sandbox could not be set up, so the command did not run: {failed}\n")
            return
    for number in _IGNORED:
        _signal.signal(number, _signal.SIG_IGN)
    _prctl(_PR_SET_CHILD_SUBREAPER, 1)  # if refused, the shell's group is still killed at the end
    # SIGSTOP cannot be ignored: a command may stop its supervisor. While Chimera lives it continues
    # the supervisor at once (see shell.py); should Chimera die meanwhile, the kernel does it here.
    _prctl(_PR_SET_PDEATHSIG, _signal.SIGCONT)
    try:
        shell = os.posix_spawnp(
            "bash",
            ["bash", "-c", command],
            _environment(),
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, out, 1),
                (os.POSIX_SPAWN_DUP2, out, 2),
                (os.POSIX_SPAWN_CLOSE, out),
            ],
            setsid=True,
            setsigmask=(),
            setsigdef=_DEFAULTS,
        )
    except OSError as err:
        _report(f"error cannot start bash: {err.strerror}\n")
        return
    os.close(out)  # from now on the output pipe closes when the command's last process does
    _report(f"pid {shell}\n")
    status = _wait(shell)
    _kill(-shell)  # its group at once (the id is never reused while the group has a member left)
    status = _end_all(shell, status)
    if status is not None:
        _report(f"signal {os.WTERMSIG(status)}\n" if os.WIFSIGNALED(status) else f"exit {os.WEXITSTATUS(status)}\n")


def _confine(rules: int) -> str:
    """Apply the sandbox's rules (in the file ``rules``) to this process and what it starts; what failed, or ""."""
    chunks = []
    try:
        while chunk := os.read(rules, 1 << 16):
            chunks.append(chunk)
    finally:
        os.close(rules)
    spec = b"".join(chunks).decode("utf-8", "surrogateescape")
    sys.path.insert(0, __file__.rpartition("/")[0].rpartition("/")[0] + "/sandbox")
    try:
        import landlock  # type: ignore[import-not-found]  # sandbox/landlock.py, by its own name (see above)
    except ImportError as err:
        return f"the sandbox's kernel layer is missing ({err})"
    failed: str = landlock.restrict(spec)
    return failed


def _prctl(option: int, value: int) -> None:
    try:
        import _ctypes
    except ImportError:  # a Python built without ctypes: the shell's group is still killed at the end
        return
    call = getattr(_ctypes, "call_function", None)  # undocumented; ctypes proper if it ever goes
    if call is not None:
        program = _ctypes.dlopen(None)  # type: ignore[arg-type]  # None: this program and its libc
        call(_ctypes.dlsym(program, "prctl"), (option, value, 0, 0, 0))
    else:
        import ctypes

        ctypes.CDLL(None).prctl(option, value, 0, 0, 0)


def _environment() -> dict[bytes, bytes]:
    """The environment this process was started with: Python may have added LC_CTYPE to os.environ."""
    with open("/proc/self/environ", "rb") as fh:
        pairs = fh.read().split(b"\0")
    return dict(pair.split(b"=", 1) for pair in pairs if b"=" in pair)


def _wait(shell: int) -> int | None:
    """The shell's wait status once it exits, or None as soon as the control pipe closes."""
    exited = os.pidfd_open(shell)
    while True:
        ready, _, _ = select.select([0, exited], [], [])
        if 0 in ready and not os.read(0, 512):
            return None
        if exited in ready:
            return os.waitpid(shell, 0)[1]


def _end_all(shell: int, status: int | None) -> int | None:
    """Kill every descendant and reap them all; the shell's wait status, if it is reaped here."""
    while True:
        try:
            while True:
                pid, found = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
                if pid == shell:
                    status = found
        except ChildProcessError:
            return status  # no children left, so no descendants either
        for pid in _descendants():
            _kill(pid)
        try:
            pid, found = os.waitpid(-1, 0)  # a process just killed; then look again for any it left
        except ChildProcessError:
            return status
        if pid == shell:
            status = found


def _descendants() -> list[int]:
    """Every live process below this one, parents before their children."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue  # it ended meanwhile
        parent = int(stat[stat.rindex(b")") + 2 :].split(maxsplit=2)[1])
        children.setdefault(parent, []).append(int(name))
    found: list[int] = []
    todo = [os.getpid()]
    while todo:
        below = children.get(todo.pop(), [])
        found += below
        todo += below
    return found


def _kill(pid: int) -> None:
    try:  # noqa: SIM105 - contextlib would cost an import on every call
        os.kill(pid, _signal.SIGKILL)
    except OSError:
        pass  # already gone


def _report(line: str) -> None:
    try:  # noqa: SIM105 - as above
        os.write(1, line.encode())
    except OSError:
        pass  # nobody is listening any more (Chimera died); the killing matters, not the report


if __name__ == "__main__":
    main()
