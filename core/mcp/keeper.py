"""Provides the process a stdio MCP server runs under on Linux, so nothing the server starts outlives it.

The SDK starts ``python -I -S keeper.py COMMAND ARGS…`` in a session of its own, with the
protocol's pipes as stdin and stdout and the server's log as stderr. The keeper makes itself
a child subreaper, so every process the server orphans (a ``setsid -f``, a double fork, a
daemon) becomes its child rather than init's, and starts the server in its own process group
with those pipes; then it lets go of its own copies of them, so the server's end of the
protocol is the server's alone. It waits until:

- the server exits (its stdin closed, as the SDK's shutdown first does, or by itself);
- the SDK sends the group TERM (its shutdown's second step): the server has a second to end;
- Chimera dies, even by SIGKILL: the kernel sends the keeper TERM (``PR_SET_PDEATHSIG``).

Then it kills every process descended from it, reaps them all, and exits as the server did.
It reuses the bash supervisor's sweep (``tools/supervisor.py``: the same processes, the same
guarantees) and, like it, imports only what is loaded at startup or written in C.
"""

import _signal  # type: ignore[import-not-found]  # the C half of `signal`
import posix as os
import select
import sys

sys.path.insert(0, __file__.rpartition("/")[0].rpartition("/")[0] + "/tools")
import supervisor as sweep  # type: ignore[import-not-found]  # tools/supervisor.py, by its own name

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
_GRACE = 1.0  # seconds the server has to end after TERM before it and all it started are killed


def main() -> None:
    command = sys.argv[1:]
    # TERM only wakes the wait below (through the wakeup pipe), never raises: it may come at any moment, and the
    # sweep must run whatever the moment was.
    told, wake = os.pipe()
    os.set_blocking(wake, False)
    _signal.set_wakeup_fd(wake)
    _signal.signal(_signal.SIGTERM, _noted)
    sweep._prctl(_PR_SET_CHILD_SUBREAPER, 1)
    sweep._prctl(_PR_SET_PDEATHSIG, _signal.SIGTERM)
    try:
        server = os.posix_spawnp(
            command[0], command, sweep._environment(), setsigdef=(_signal.SIGTERM, _signal.SIGPIPE)
        )
    except OSError as err:
        os.write(2, f"chimera: cannot start {command[0]}: {err.strerror}\n".encode())
        sys.exit(127)
    quiet = os.open("/dev/null", os.O_RDWR)
    os.dup2(quiet, 0)  # the protocol's pipes are the server's alone: its exit closes them
    os.dup2(quiet, 1)
    os.close(quiet)
    status = None
    ended = os.pidfd_open(server)
    ready, _, _ = select.select([ended, told], [], [])
    if ended not in ready:  # TERM: the server has its grace to end
        ready, _, _ = select.select([ended], [], [], _GRACE)
    if ended in ready:
        status = os.waitpid(server, 0)[1]
    status = sweep._end_all(server, status)
    if status is None or os.WIFSIGNALED(status):
        sys.exit(128 + (os.WTERMSIG(status) if status is not None else _signal.SIGKILL))
    sys.exit(os.WEXITSTATUS(status))


def _noted(_number: int, _frame: object) -> None:
    """TERM came (the SDK's shutdown, or Chimera gone): the wakeup pipe says so to the wait."""


if __name__ == "__main__":
    main()
