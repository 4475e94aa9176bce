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
* never gets a terminal (output is captured, ``--no-pager``).

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

import os
import re
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path

__all__ = ["FIXED_OVERRIDES", "git_environment", "git_executable", "neutralising", "run_git", "safe_path"]

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
) -> subprocess.CompletedProcess[bytes]:
    """Run ``git [where] args`` in ``cwd`` with nothing the repository names able to run; its completed process.

    ``where`` holds the options that pick the repository (``-C``, ``--git-dir``,
    ``--work-tree``): the config is listed there first. ``settings`` are the
    caller's own config values; the overrides come after them, so they win.
    ``env`` adds the caller's own variables (``GIT_INDEX_FILE``...).
    ``config_files``: every file of the repository's own config, when the caller
    knows them (an explicit ``--git-dir``), so an unchanged config is not listed
    again. When the config cannot be read (a broken file), that listing's failed
    process is returned. Raises OSError when git cannot start, and
    ``subprocess.TimeoutExpired`` after ``timeout`` seconds (each of the two calls).
    """
    base = git_environment(env)
    key = None if config_files is None else (git, *where, *_stats([*_global_files(base), *config_files]))
    names = _listed.get(key) if key is not None else None
    if names is None:
        listed = subprocess.run(
            [git, "--no-pager", *where, "config", "--list", "--includes", "--null", "--name-only"],
            input=b"",
            capture_output=True,
            cwd=cwd,
            env=base,
            timeout=timeout,
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
    return subprocess.run(
        [git, "--no-pager", *where, *args],
        input=input if input is not None else b"",
        capture_output=True,
        cwd=cwd,
        env=full,
        timeout=timeout,
    )


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
