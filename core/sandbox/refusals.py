"""Provides ``refusal``: what the sandbox refused a finished command, read from what the command printed; and
``git_refusal``: the words for what decides which programs git runs, put back after the command changed it.

Landlock tells nobody but the process what it refused (its audit records need
root and the audit daemon), so a refusal is read from the output, and claimed only
where the policy explains the error:

- a line saying ``Permission denied`` or ``Operation not permitted`` names a path
  (quoted, or before the colon, as bash, coreutils, make and Python print it) that
  the sandbox hides, or that it does not let a command write while Chimera itself
  could (so a file only root may write is not blamed on the sandbox), or that was
  made during the call where the rules name each entry (``Confinement.made_since``);
- a signal or a trace refused (``kill``'s and ``gdb``'s ``Operation not permitted``): only what
  the command started may be signalled or traced;
- with the network off, a line saying a connection failed (curl's ``Failed to
  connect``, ``Permission denied`` from a socket) names the address when it can.

Its limits: a program that swallows the error, or prints it without a path, goes
unnoticed (the command still fails as the kernel made it); a path printed relative
to a folder other than the command's starting one may be missed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from chimera.core.sandbox.policy import Confinement

__all__ = ["git_refusal", "git_unrestored", "refusal"]

_DENIED = re.compile(r"Permission denied|Operation not permitted")
_QUOTED = re.compile(r"""['"‘`]([^'"’`\n]+)['"’`]""")
_BEFORE_COLON = re.compile(r"(?:^|[\s:])((?:/|\./|\.\./|~/)?[\w.@+\-/]+): (?:cannot|Permission|Operation)")
_CONNECT = re.compile(
    r"Failed to connect to (?P<host>\S+) port (?P<port>\d+)"
    r"|[Cc]ould(?:n't| not) connect|[Cc]onnection (?:refused|failed)|Network is unreachable"
)
_SIGNALLED = re.compile(
    r"kill: \(?(?P<kill>\d+)\)? - Operation not permitted"  # bash's kill
    r"|kill: sending signal to (?P<sent>\d+) failed: Operation not permitted"  # procps' kill
    r"|(?P<ptrace>ptrace)\b[^\n]*?(?:(?P<traced>\d+)\b[^\n]*)?Operation not permitted"  # gdb, strace
)
_SOCKETISH = re.compile(r"socket|connect|urlopen|http|Connection|getaddrinfo|port \d", re.IGNORECASE)
_MOST_LINES = 200  # lines read from the end of the output
_MOST_NAMED = 3  # refusals named in the one line


def refusal(output: str, sandbox: Confinement, cwd: Path) -> str:
    """What the sandbox refused, as a phrase ("writing /tmp/x, outside the workspace and $TMPDIR"), or "";
    several refusals (at most ``_MOST_NAMED``) joined by "; ", and a failed connection after them."""
    lines = output.splitlines()[-_MOST_LINES:]
    found: list[str] = []
    pathless = False  # a refusal naming no path: with the network off, most likely a socket's
    for line in lines:
        if not _DENIED.search(line):
            continue
        signalled = _signalled(line)
        if signalled:
            if signalled not in found:
                found.append(signalled)
            continue
        candidates = _paths(line)
        # Landlock refuses a connection with EACCES ("Permission denied"), never EPERM
        pathless = pathless or ("Permission denied" in line and (not candidates or bool(_SOCKETISH.search(line))))
        for candidate in candidates:
            path = Path(os.path.expanduser(candidate))
            phrase = _refused_path(path if path.is_absolute() else cwd / path, sandbox)
            if phrase and phrase not in found:
                found.append(phrase)
                break
    if not sandbox.network:
        address = _address(lines)
        if address or any(_CONNECT.search(line) for line in lines):
            found.append(
                f"a connection to {address or 'the network'} (commands have no network here; --allow-network gives it)"
            )
        elif pathless and not found:
            found.append("a network connection, it seems (the error names no file; commands have no network here)")
    if len(found) > _MOST_NAMED:
        found = [*found[:_MOST_NAMED], f"and {len(found) - _MOST_NAMED} more"]
    return "; ".join(found)


def _signalled(line: str) -> str:
    """The phrase for a signal or a trace the sandbox refused, as ``line`` reports it, or "": the sandbox lets a
    command signal and trace only what it started (a process of another user is refused by the kernel anyway)."""
    match = _SIGNALLED.search(line)
    if match is None:
        return ""
    pid = match.group("kill") or match.group("sent") or match.group("traced")
    if pid is not None:
        try:
            if os.stat(f"/proc/{pid}").st_uid != os.getuid():
                return ""
        except OSError:
            pass  # gone since: the refusal stands as the line says it
    what = "tracing" if match.group("ptrace") else "signalling"
    whom = f"process {pid}" if pid is not None else "a process"
    return f"{what} {whom}, outside the sandbox (a command may signal or trace only what it started)"


def _paths(line: str) -> list[str]:
    """The words of ``line`` that may be the path an error names, likeliest first."""
    found = [m.group(1) for m in _QUOTED.finditer(line)]
    found += [m.group(1) for m in _BEFORE_COLON.finditer(line)]
    return [p for p in found if "/" in p or "." in p or p.isidentifier()]


_PROCESS_FILE = re.compile(r"/proc/(\d+)/")


def _refused_path(path: Path, sandbox: Confinement) -> str:
    """The phrase for ``path`` when the sandbox, not the file's own permissions, refused it; else ""."""
    process = _PROCESS_FILE.match(str(path))
    if process is not None:  # resolved here, its links would lead into Chimera's own files: read as written
        try:
            if os.stat(f"/proc/{process.group(1)}").st_uid != os.getuid():
                return ""
        except OSError:
            pass  # gone since: the refusal stands as the line says it
        return f"reaching {path}, another process's (a command may look into only the processes it started)"
    path = Path(os.path.realpath(path))  # what it leads to, by a link out of the workspace too
    if sandbox.hides(path):
        return f"reaching {path}, which the sandbox hides (a secret, Chimera's own state or a read deny rule)"
    if sandbox.may_write(path):
        if path.exists() and sandbox.made_since(path):
            return (
                f"reaching {path}: it was made during this call in a folder the sandbox divides around a hidden "
                "path, and is reachable from the next call on (run what uses it in another call)"
            )
        return ""
    target = path if path.exists() else path.parent
    if target.exists() and os.access(target, os.W_OK):
        return f"writing {path}, outside the workspace and $TMPDIR ({sandbox.tmpdir})"
    return ""


def _address(lines: list[str]) -> str:
    """HOST:PORT the output names for a failed connection, or ""."""
    for line in lines:
        match = _CONNECT.search(line)
        if match is None:
            continue
        if match.group("host"):
            return f"{match.group('host')}:{match.group('port')}"
    return ""


def git_refusal(put_back: list[str], *, lost: bool = False) -> str:
    """What the sandbox refused when a command changed ``put_back`` (``sandbox.git_guard``), said once; ``lost``:
    the git folder itself was moved away or deleted, and is not at the workspace's top to be put back."""
    if lost:
        return (
            "changing .git: it was moved away or deleted, and is not at the workspace's top to be put back "
            "(a git directory in its place would have its hooks run outside the sandbox)"
        )
    them = "it is" if len(put_back) == 1 else "they are"
    configs = any("config" in name for name in put_back)
    fine = " (config keys that run nothing, such as user.email or a remote's URL, may change)" if configs else ""
    return (
        f"changing {', '.join(put_back)}: git runs its hooks, and the programs its config names, outside the "
        f"sandbox, so {them} put back as before, what the command left kept beside as NAME.refused-by-sandbox{fine}"
    )


def git_unrestored(what: str) -> str:
    """What the sandbox refused when it could not put the git directory back as it was (``what``: where, why)."""
    return (
        f"changing the git directory, and it could not be put back as it was: {what}; look at .git/hooks and "
        ".git/config before your next git command"
    )
