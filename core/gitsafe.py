"""Provides ``run_git``: every git Chimera runs itself, unable to start a program the workspace names.

A workspace's ``.git/config`` (and whatever it includes), its ``.gitattributes``
and the person's global config can name programs git would start on its own: an
fsmonitor, hooks, a pager, clean/smudge filters, diff and merge drivers, a gpg
program, credential helpers, an ssh command, a remote fetched lazily in a partial
clone. A model allowed to edit files can plant any of them. So every call:

* gets a minimal environment: PATH (absolute folders only), HOME,
  XDG_CONFIG_HOME, TZ and ``GIT_CEILING_DIRECTORIES``, ``LC_ALL=C``; no API
  key, no other ``GIT_*`` from outside,
  no SSH agent; no system config, no terminal prompt, no optional locks, no
  lazy fetch, and no transport allowed at all (``GIT_ALLOW_PROTOCOL`` empty), so
  nothing is fetched: no ssh, no remote helper, no upload-pack, no proxy;
* first lists the names of the config keys in effect there
  (``git config --list --includes --name-only``, which runs nothing), then
  overrides every key that names a program, the fixed ones and the per-driver
  ones (``filter.<name>.clean``...), with a value that runs nothing. Overrides
  travel as ``GIT_CONFIG_KEY_<n>``/``GIT_CONFIG_VALUE_<n>``, so a key name is
  never re-parsed, and git's own children (a submodule's status) inherit them;
* never gets a terminal (output is captured, ``--no-pager``);
* runs in a process group of its own, killed whole at its timeout, when a
  :class:`GitStop` it was given is stopped (an interrupt), and when Chimera
  exits: a `.gitignore` or an included config that is a named pipe blocks git
  for ever, and such a git must neither hang the run nor outlive it.
  ``CHIMERA_GIT_TIMEOUT`` (seconds) overrides every caller's timeout.

Listing costs a git process. A caller that names every config file its
repository reads (the checkpoints' shadow repository: its own ``config``) lets
the names be reused until one of those files, or a global one, changes; a
config that includes other files is listed every time.

What each override does was checked against git 2.39: an empty ``clean``,
``smudge``, ``process``, ``textconv``, ``command`` or ``program`` runs nothing
(a required filter then fails, so ``required`` is turned off too), an empty
``credential.helper`` clears the helper list, ``protocol.allow=never`` loses to
a ``protocol.<name>.allow`` (hence those are listed and overridden, and
``GIT_ALLOW_PROTOCOL`` is set as well).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = [
    "FIXED_OVERRIDES",
    "GitStop",
    "GitStopped",
    "git_environment",
    "git_executable",
    "git_timeout",
    "neutralising",
    "run_git",
    "safe_path",
]

# Keys that name a program (or have a default one), always overridden.
FIXED_OVERRIDES: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("core.pager", "cat"),
    ("core.editor", ":"),  # ":" is git's "no editor"
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("core.sshCommand", ""),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("credential.helper", ""),  # empty clears the list, URL-specific helpers included
    ("diff.external", ""),
    ("gpg.program", ""),
    ("gpg.openpgp.program", ""),
    ("gpg.x509.program", ""),
    ("gpg.ssh.program", ""),
    ("gpg.ssh.defaultKeyCommand", ""),
    ("log.showSignature", "false"),  # verifying a signature runs the gpg program
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("uploadpack.packObjectsHook", ""),
    ("protocol.allow", "never"),
    ("status.submoduleSummary", "false"),
    ("submodule.recurse", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)

# Per-name keys, known only by listing the config: (pattern over git's canonical name, value that runs nothing).
_PER_NAME: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"filter\..+\.(clean|smudge|process)"), ""),
    (re.compile(r"filter\..+\.required"), "false"),
    (re.compile(r"diff\..+\.(textconv|command)"), ""),
    (re.compile(r"merge\..+\.driver"), ""),
    (re.compile(r"(difftool|mergetool)\..+\.cmd"), ""),
    (re.compile(r"tar\..+\.command"), ""),
    (re.compile(r"gpg\..+\.program"), ""),
    (re.compile(r"credential\..+\.helper"), ""),
    (re.compile(r"protocol\..+\.allow"), "never"),
    (re.compile(r"pager\.[^.]+"), "false"),
    # Hooks defined in config (newer git; 2.39 has none, so this one is not checked here).
    (re.compile(r"hook\..+\.command"), ""),
)

_ENVIRONMENT = {
    "LC_ALL": "C",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_ALLOW_PROTOCOL": "",  # set and empty: no transport at all, whatever the config allows
    "GIT_NO_LAZY_FETCH": "1",
}
# Where the global config and excludes live, how times read, and where discovery must stop (it only narrows).
_KEPT = ("HOME", "XDG_CONFIG_HOME", "TZ", "GIT_CEILING_DIRECTORIES")
_INCLUDE = re.compile(r"include(if\..+)?\.path")
_LISTED_MAX = 64
_listed: dict[tuple[object, ...], list[str]] = {}  # config names by (git, where, files' stat): see run_git


class GitStopped(OSError):
    """A git call was ended by its :class:`GitStop` (the run was interrupted)."""


class GitStop:
    """Ends, from any thread, the git calls that were given it: running ones at once, later ones before they start."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._running: set[subprocess.Popen[bytes]] = set()
        self.stopped = False

    def stop(self) -> None:
        with self._lock:
            self.stopped = True
            running = list(self._running)
        for proc in running:
            _kill_group(proc)

    def _add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.add(proc)
            stopped = self.stopped
        if stopped:
            _kill_group(proc)

    def _discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._running.discard(proc)


_running: set[subprocess.Popen[bytes]] = set()  # every git running now, killed if Chimera exits meanwhile
_running_lock = threading.Lock()


def git_timeout(default: float) -> float:
    """``CHIMERA_GIT_TIMEOUT`` in seconds when set to a number above 0, else ``default``."""
    try:
        value = float(os.environ.get("CHIMERA_GIT_TIMEOUT", ""))
    except ValueError:
        return default
    return value if 0 < value < float("inf") else default


def safe_path(path: str | None = None) -> str:
    """``path`` (default: ``$PATH``) with only its absolute folders: nothing is looked up in the workspace."""
    value = os.environ.get("PATH", os.defpath) if path is None else path
    return os.pathsep.join(part for part in value.split(os.pathsep) if os.path.isabs(part))


def git_executable() -> str | None:
    """The ``git`` program on the PATH's absolute folders, or None without git."""
    return shutil.which("git", path=safe_path())


def git_environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment every git call gets: minimal, plus ``extra`` (the caller's own ``GIT_*`` settings)."""
    env = {name: os.environ[name] for name in _KEPT if name in os.environ}
    env["PATH"] = safe_path()
    env.update(_ENVIRONMENT)
    env.update(extra or {})
    return env


def neutralising(names: Sequence[str]) -> list[tuple[str, str]]:
    """The overrides for a config whose keys are ``names``: the fixed ones, then one per program-naming key."""
    overrides = list(FIXED_OVERRIDES)
    seen = {key.lower() for key, _ in overrides}
    for name in names:
        for pattern, value in _PER_NAME:
            if pattern.fullmatch(name) and name not in seen:
                seen.add(name)
                overrides.append((name, value))
                if name.startswith("filter."):  # a required filter with no command fails: make it optional
                    required = name.rsplit(".", 1)[0] + ".required"
                    if required not in seen:
                        seen.add(required)
                        overrides.append((required, "false"))
    return overrides


def run_git(
    git: str,
    args: Sequence[str],
    *,
    cwd: Path,
    where: Sequence[str] = (),
    settings: Sequence[tuple[str, str]] = (),
    env: Mapping[str, str] | None = None,
    input: bytes | None = None,
    timeout: float,
    config_files: Sequence[Path] | None = None,
    stop: GitStop | None = None,
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git [where] args`` in ``cwd`` with nothing the repository names able to run; its completed process.

    ``where`` holds the options that pick the repository (``-C``, ``--git-dir``,
    ``--work-tree``): the config is listed there first. ``settings`` are the
    caller's own config values; the overrides come after them, so they win.
    ``env`` adds the caller's own variables (``GIT_INDEX_FILE``...).
    ``config_files``: every file of the repository's own config, when the caller
    knows them (an explicit ``--git-dir``), so an unchanged config is not listed
    again. When the config cannot be read (a broken file), that listing's failed
    process is returned. Raises OSError when git cannot start, GitStopped when
    ``stop`` ended it, and ``subprocess.TimeoutExpired`` after ``timeout`` seconds
    (each of the two calls; ``CHIMERA_GIT_TIMEOUT`` overrides it), with git's
    whole process group killed.
    """
    timeout = git_timeout(timeout)
    base = git_environment(env)
    key = None if config_files is None else (git, *where, *_stats([*_global_files(base), *config_files]))
    names = _listed.get(key) if key is not None else None
    if names is None:
        listed = _run(
            [git, "--no-pager", *where, "config", "--list", "--includes", "--null", "--name-only"],
            b"",
            cwd=cwd,
            env=base,
            timeout=timeout,
            stop=stop,
        )
        if listed.returncode != 0:
            return listed
        names = [os.fsdecode(name) for name in listed.stdout.split(b"\0") if name]
        if key is not None and not any(_INCLUDE.fullmatch(name) for name in names):
            if len(_listed) >= _LISTED_MAX:
                _listed.clear()
            _listed[key] = names
    overrides = [*settings, *neutralising(names)]
    full = dict(base, GIT_CONFIG_COUNT=str(len(overrides)))
    for i, (name, value) in enumerate(overrides):
        full[f"GIT_CONFIG_KEY_{i}"] = name
        full[f"GIT_CONFIG_VALUE_{i}"] = value
    return _run([git, "--no-pager", *where, *args], input or b"", cwd=cwd, env=full, timeout=timeout, stop=stop)


def _run(
    argv: list[str], data: bytes, *, cwd: Path, env: Mapping[str, str], timeout: float, stop: GitStop | None
) -> subprocess.CompletedProcess[bytes]:
    """``argv`` in a process group of its own, fed ``data``; its group killed on timeout, stop or any exception."""
    if stop is not None and stop.stopped:
        raise GitStopped(f"git {argv[-1]} was not started: the run was interrupted")
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
    )
    with _running_lock:
        _running.add(proc)
    try:
        if stop is not None:
            stop._add(proc)
        try:
            out, err = proc.communicate(data, timeout=timeout)
        except BaseException:  # the timeout, or an error or interrupt in this thread: nothing is left running
            _end(proc)
            raise
    finally:
        if stop is not None:
            stop._discard(proc)
        with _running_lock:
            _running.discard(proc)
    if stop is not None and stop.stopped and proc.returncode == -signal.SIGKILL:
        raise GitStopped("git was stopped: the run was interrupted")
    return subprocess.CompletedProcess(argv, proc.returncode, out, err)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    if proc.returncode is None:  # its group id is its pid, never reused while it is not reaped
        with contextlib.suppress(OSError):
            os.killpg(proc.pid, signal.SIGKILL)


def _end(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc``'s group and reap it; its pipes close once every process of the group is gone."""
    _kill_group(proc)
    try:
        proc.communicate(timeout=1)
    except subprocess.TimeoutExpired:  # a process that left the group holds the pipes: stop reading them
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()
        proc.wait()


@atexit.register
def _kill_running() -> None:
    """At exit (an interrupted run whose git is still blocked, on a thread that was let go): kill every git left."""
    with _running_lock:
        running = list(_running)
    for proc in running:
        _kill_group(proc)


def _global_files(env: Mapping[str, str]) -> list[Path]:
    """Where git reads the global config with ``env`` (the system config is off)."""
    home = env.get("HOME")
    xdg = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else None)
    return [Path(folder, *parts) for folder, parts in ((xdg, ("git", "config")), (home, (".gitconfig",))) if folder]


def _stats(files: Sequence[Path]) -> list[tuple[str, int, int, int]]:
    """Each file's identity and version: a changed, created or removed file changes the list."""
    out = []
    for path in files:
        try:
            info = os.stat(path)
        except OSError:
            out.append((str(path), -1, -1, -1))
        else:
            out.append((str(path), info.st_ino, info.st_size, info.st_mtime_ns))
    return out
