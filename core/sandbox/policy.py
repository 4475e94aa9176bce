"""Provides what a sandboxed command may touch: ``SandboxSettings`` (the person's choice) and ``Confinement``
(those settings made concrete for one workspace, as the Landlock rules the supervisor applies).

By default a command reads the whole file system but the person's secrets
(:data:`SECRETS` under ``$HOME`` as Chimera started, ``CHIMERA_HOME``, paths a
``read`` deny rule names, and ``hidden`` paths from config.toml); writes only the
workspace (the workspace's ``.git`` included: today's rules let a command run
``git commit``; for a linked worktree, whose ``.git`` file names a git directory
elsewhere, that directory and the repository's common one too), a private
temporary folder set as ``TMPDIR``, ``writable`` paths from config.toml, and
``/dev/null`` and its kind; and makes no TCP connection and binds no TCP port
unless the network is allowed.

Landlock only grants access to whole hierarchies, so "read everything but
``~/.ssh``" is built around the hidden paths: read is granted on every entry of
``/`` but the folders on the way to a hidden path, where it is granted on each
entry beside that way, and so on down. The rules are made afresh for every call;
a file made *during* a call directly in a folder on the way to a hidden path
(``~/new.txt`` while ``~/.ssh`` is hidden) cannot be read until the next call
(access taken away, never given). Listing folders is granted everywhere, so the
*names* in a hidden folder can be listed, never its files read. ``/dev`` is built
the same way: only the harmless devices are reachable (never a disk: as root,
``/dev/sda`` would read every secret past every rule).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from chimera.core.sandbox import MODES, landlock, tempdirs

__all__ = ["MODES", "SECRETS", "Confinement", "SandboxSettings", "linked_git_dirs", "small_file"]

SECRETS = (".ssh", ".aws", ".config/gcloud", ".gnupg", ".netrc", ".docker/config.json")
"""The person's secrets, relative to ``$HOME``: never readable by a sandboxed command."""

_DEVICES_READ = ("null", "zero", "full", "random", "urandom", "tty", "ptmx", "pts")  # /dev/fd is /proc's
_DEVICES_WRITE = ("null", "zero", "full", "tty", "ptmx", "pts", "shm")
_MOST_MATCHES = 200  # paths a wildcard in a read deny rule is expanded to


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """How commands are confined: ``mode`` (``workspace`` or ``off``), whether they may use the network, whether
    a command only the permission mode would ask about runs unasked, confined (``auto``), and extra ``writable``
    and ``hidden`` paths. ``home`` is ``$HOME`` as Chimera started (its secrets are hidden),
    ``chimera_home`` Chimera's own state (hidden too)."""

    mode: str = "workspace"
    allow_network: bool = False
    auto: bool = False  # --sandbox-auto: commands only the mode asks about run unasked, confined
    writable: tuple[Path, ...] = ()
    hidden: tuple[Path, ...] = ()
    home: Path | None = field(default_factory=lambda: _home())
    chimera_home: Path | None = None

    @property
    def on(self) -> bool:
        return self.mode != "off"

    def confine(self, workspace: Path, hidden: Iterable[Path] = (), *, temp_root: Path | None = None) -> Confinement:
        """The confinement of commands run in ``workspace``; ``hidden``: more paths to hide (read deny rules);
        ``temp_root``: where the private temporary folder is made (None: the system's temporary folder)."""
        secrets = [self.home / name for name in SECRETS] if self.home is not None else []
        if self.chimera_home is not None:
            secrets.append(self.chimera_home)
        return Confinement(
            workspace=_real(workspace),
            writable=tuple(_real(p) for p in (*self.writable, *linked_git_dirs(workspace))),
            hidden=tuple(dict.fromkeys(_real(p) for p in secrets)),
            unreadable=tuple(dict.fromkeys(_real(p) for p in (*self.hidden, *hidden))),
            network=self.allow_network,
            temp_root=temp_root,
        )


def linked_git_dirs(workspace: Path) -> list[Path]:
    """The git directory a ``.git`` file at the workspace's root names (a linked worktree's, a submodule's) and
    the common directory it shares with its repository: a commit writes both."""
    try:
        text = (small_file(workspace / ".git") or b"").decode()
    except UnicodeError:
        return []
    if not text.startswith("gitdir:"):
        return []
    git_dir = workspace / text[len("gitdir:") :].strip()
    found = [git_dir]
    with contextlib.suppress(UnicodeError):
        common = small_file(git_dir / "commondir")
        if common is not None:
            found.append(git_dir / common.decode().strip())
    return found


def small_file(path: Path | str, most: int = 4 << 20) -> bytes | None:
    """The bytes of the regular file at ``path`` (a link followed) when it holds at most ``most``; None for
    anything else. A FIFO, a device or an endless file a command left there is never read: reading it would
    block or never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)  # (a FIFO opens at once, unread)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        content = os.read(fd, most + 1)  # (a regular file gives all it holds at once, up to the count)
    except OSError:
        return None
    finally:
        os.close(fd)
    return content if len(content) <= most else None


def hidden_by_rules(patterns: Iterable[str], workspace: Path) -> list[Path]:
    """The paths ``read`` deny rule patterns name in ``workspace`` (a wildcard expanded, at most a few hundred)."""
    import glob  # only with read deny rules

    found: list[Path] = []
    for pattern in patterns:
        if not glob.has_magic(pattern):
            found.append(Path(pattern) if os.path.isabs(pattern) else workspace / pattern)
            continue
        for n, match in enumerate(glob.iglob(pattern, root_dir=workspace, recursive=True, include_hidden=True)):
            if n >= _MOST_MATCHES:
                break
            found.append(workspace / match)
    return found


class Confinement:
    """The sandbox of the commands run in one workspace: what they may write and must not read, and their
    private temporary folder (made on first use, removed when this object goes or Chimera exits).

    ``hidden`` paths (the person's secrets, Chimera's state) can be neither read nor written, wherever they
    are; ``unreadable`` ones (read deny rules, ``[sandbox] hidden``) cannot be read, and inside a writable
    folder they can still be written, as the rules allow: so only reading is carved around them there, and
    files made in the folders on the way to them can be made, just not read back in the same call.
    """

    def __init__(
        self,
        *,
        workspace: Path,
        writable: Sequence[Path] = (),
        hidden: Sequence[Path] = (),
        unreadable: Sequence[Path] = (),
        network: bool = False,
        temp_root: Path | None = None,
    ) -> None:
        self.workspace = workspace
        self.writable = tuple(writable)
        self.hidden = tuple(hidden)
        self.unreadable = tuple(unreadable)
        self.network = network
        self.temp_root = temp_root
        self._tmpdir: Path | None = None
        self._granted: frozenset[str] = frozenset()  # what the last rules named, below a folder carved up
        self._carved: frozenset[str] = frozenset()  # the folders the last rules were carved in

    @property
    def tmpdir(self) -> Path:
        """The private temporary folder commands get as ``TMPDIR`` (the same for every call of this session)."""
        if self._tmpdir is None:
            self._tmpdir = tempdirs.make(self.temp_root)
            weakref.finalize(self, shutil.rmtree, self._tmpdir, True)
        return self._tmpdir

    def environment(self, env: dict[str, str]) -> dict[str, str]:
        """``env`` with the private temporary folder as ``TMPDIR`` (and ``TMP``, ``TEMP``)."""
        tmp = str(self.tmpdir)
        return {**env, "TMPDIR": tmp, "TMP": tmp, "TEMP": tmp}

    def hides(self, path: Path) -> bool:
        """Whether a sandboxed command cannot read ``path`` (resolved) because it lies in a hidden path."""
        real = str(_real(path))
        concealed = (*self.hidden, *self.unreadable)
        if not any(_inside(real, str(h)) for h in concealed):
            return False
        return not any(
            _inside(real, str(root))
            and not any(_inside(real, str(h)) and _inside(str(h), str(root)) for h in concealed)
            for root in self._writable_roots()
        )

    def may_write(self, path: Path) -> bool:
        """Whether a sandboxed command may write ``path`` (resolved)."""
        real = _real(path)
        return self._writes(str(real)) or (real.parent == Path("/dev") and real.name in _DEVICES_WRITE)

    def made_since(self, path: Path) -> bool:
        """Whether ``path`` (resolved) lies below an entry made after the last rules, in a folder they were carved
        in: Landlock grants nothing there until the rules are made again (the next call)."""
        real = str(_real(path))
        while True:
            parent = os.path.dirname(real)
            if parent in self._carved:
                return real not in self._granted
            if parent == real:
                return False
            real = parent

    def _writable_roots(self) -> tuple[Path, ...]:
        return (self.workspace, self.tmpdir, *self.writable)

    def _writes(self, real: str) -> bool:
        """Whether a writable root holds ``real`` without a hidden path (carved out of it) holding it too."""
        return any(
            _inside(real, str(root))
            and not any(_inside(real, str(h)) and _inside(str(h), str(root)) for h in self.hidden)
            for root in self._writable_roots()
        )

    def spec(self, abi: int) -> str:
        """The rules as ``landlock.restrict`` reads them, for a kernel offering Landlock ABI ``abi``."""
        fs = landlock.fs_rights(abi)
        net = landlock.ACCESS_NET if abi >= 4 and not self.network else 0
        scoped = 0
        if abi >= 6:
            scoped = landlock.SCOPE_SIGNAL | (0 if self.network else landlock.SCOPE_ABSTRACT_UNIX)
        hidden = [str(h) for h in self.hidden]
        concealed = [*hidden, *(str(u) for u in self.unreadable)]
        carved: set[str] = set()
        rules: list[tuple[int, str]] = [(landlock.READ_DIR, "/")]  # names are listable everywhere
        rules += _around("/", landlock.READ, [*concealed, "/dev"], carved)
        rules += [(landlock.DEV_RIGHTS, f"/dev/{name}") for name in _DEVICES_READ]
        for root in self._writable_roots():
            rules += _around(str(root), landlock.READ, concealed, carved)
            rules += _around(str(root), landlock.WRITE, hidden, carved)
        rules += [(landlock.READ | landlock.WRITE, f"/dev/{name}") for name in _DEVICES_WRITE]
        self._carved = frozenset(carved)
        self._granted = frozenset(path for _, path in rules if os.path.dirname(path) in carved)
        lines = [f"{fs} {net} {scoped}"]
        for rights, path in rules:
            if "\n" not in path:  # such a name cannot be passed: left out, so less is reachable, never more
                lines.append(f"{rights & fs} {path}")
        return "\n".join(lines)


def _around(root: str, rights: int, carved: Sequence[str], folders: set[str]) -> list[tuple[int, str]]:
    """Rules granting ``rights`` on ``root`` and all below it but the ``carved`` paths (strings: pathlib costs
    milliseconds a call here); each folder listed to carve them out is added to ``folders``."""
    inside = [c for c in carved if _inside(c, root)]
    if not inside:
        return [(rights, root)]
    if root in inside:
        return []
    folders.add(root)
    rules: list[tuple[int, str]] = []
    try:
        entries = list(os.scandir(root))
    except OSError:
        return rules  # cannot be listed: nothing below it is granted
    for entry in entries:
        with contextlib.suppress(OSError):
            if entry.is_symlink():
                continue  # its target is reached where it lies, under that place's rules
            if entry.is_dir(follow_symlinks=False):
                rules += _around(entry.path, rights, inside, folders)
            elif entry.path not in inside:
                rules.append((rights & landlock.FILE_RIGHTS, entry.path))
    return rules


def _reached(real: str, roots: Sequence[Path], carved: Sequence[Path]) -> bool:
    """Whether one of ``roots`` holds ``real`` with none of the ``carved`` paths inside it holding it too."""
    return any(
        _inside(real, str(root)) and not any(_inside(real, str(c)) and _inside(str(c), str(root)) for c in carved)
        for root in roots
    )


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root if root.endswith("/") else root + "/")


def _real(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _home() -> Path | None:
    home = os.environ.get("HOME")
    return Path(home) if home else None
