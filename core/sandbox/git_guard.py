"""Provides ``GitGuard``: what decides which programs git runs, held as it was around a confined command.

Landlock grants a folder with everything under it, so a command that may write
the workspace may write its git directory too, and it must: ``git commit``
writes objects, refs and the index there. But some files of a git directory are
programs, or name the programs git starts on its own: the hooks, ``config``
(``core.fsmonitor``, ``core.hooksPath``, filters, aliases, ``include.path``...),
``config.worktree``, ``commondir``, a submodule's hooks and config under
``modules/``, a hooks folder ``core.hooksPath`` names in the workspace and a file
of it the config includes, and the ``.git`` entry itself (another folder, a file or a link there points git
elsewhere). Planted by a confined command, they would run outside the sandbox
at the person's next ``git commit``.

So the guard reads them before the command and again after it, when nothing the
command started is left: whatever changed is put back as it was (anything new
there set aside beside it, never deleted; never through a folder that became a
link, which is set aside itself), and the call says that the sandbox refused it
(the person may run the command again outside the sandbox, as for any refusal).
A config change that only sets keys that run nothing (``user.*``, a remote's URL and refspecs, a branch's upstream: see
:data:`SAFE_KEYS`) stands, so ``git remote add`` and ``git config user.email``
work. The git directories guarded are those there when the command starts: one
a command makes (``git init``) is its own work, like any script it writes.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ASIDE", "SAFE_KEYS", "GitGuard"]

SAFE_KEYS = re.compile(
    r"user\.(name|email)"
    r"|remote\.[^\n]+\.(url|pushurl|fetch|push|tagopt|prune)"
    r"|branch\.[^\n]+\.(remote|merge|rebase|pushremote|description)"
    r"|(pull\.rebase|pull\.ff|push\.default|push\.autosetupremote|init\.defaultbranch|fetch\.prune)"
)
"""Config keys (as ``git config --list`` names them) that start no program: a change to only these stands."""

_CONFIGS = ("config", "config.worktree")
ASIDE = "refused-by-sandbox"  # what a command left where the guard puts back is kept beside it, under this suffix
_SKIPPED = frozenset({"objects", "refs", "logs", "lfs"})  # data, looked through for submodules' git dirs no deeper
_MOST_BYTES = 4 << 20  # a guarded file larger than this is compared and put back by its identity, not its bytes
_MOST_KEPT = 4096  # files whose bytes are kept from one read to the next
_read_before: dict[str, tuple[tuple[int, ...], bytes]] = {}  # path -> (its inode's identity and times, its bytes)


@dataclass(frozen=True, slots=True)
class _Item:
    """One entry as it was: a folder, a link (its target) or a file (its bytes and mode)."""

    kind: str
    content: bytes | str | None = None
    mode: int = 0


def _read(root: str) -> dict[str, _Item]:
    """``root`` and everything under it, never following a link."""
    try:
        return _entry(root, os.lstat(root))
    except OSError:
        return {}


def _entry(path: str, info: os.stat_result) -> dict[str, _Item]:
    mode = info.st_mode
    if stat.S_ISLNK(mode):
        return {path: _Item("link", os.readlink(path))}
    if stat.S_ISREG(mode):
        content: bytes | str | None
        if info.st_size > _MOST_BYTES:
            content = f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}"
        else:
            content = _content(path, info)
        return {path: _Item("file", content, stat.S_IMODE(mode))}
    if not stat.S_ISDIR(mode):
        return {path: _Item("other")}
    found = {path: _Item("dir", None, stat.S_IMODE(mode))}
    try:
        with os.scandir(path) as entries:
            for entry in entries:
                with contextlib.suppress(OSError):
                    found.update(_entry(entry.path, entry.stat(follow_symlinks=False)))
    except OSError:
        pass
    return found


def _content(path: str, info: os.stat_result) -> bytes | None:
    """A file's bytes, read again only when its inode changed since they were last read: the change time moves
    with every write and no one can set it back."""
    key = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    known = _read_before.get(path)
    if known is not None and known[0] == key:
        return known[1]
    from chimera.core.sandbox.policy import small_file

    content = small_file(path, _MOST_BYTES)  # (it was a file when looked at: never a FIFO to block on)
    if content is None:
        return None
    if len(_read_before) >= _MOST_KEPT:
        _read_before.clear()
    _read_before[path] = (key, content)
    return content


def _config_keys(content: bytes) -> list[str] | None:
    """A config file's ``name=value`` lines, as git reads them (None when git cannot read it)."""
    from chimera.core.gitsafe import git_environment, git_executable

    git = git_executable()
    if git is None:
        return None
    with tempfile.NamedTemporaryFile(prefix="chimera-config-") as held:
        held.write(content)
        held.flush()
        try:
            listed = subprocess.run(
                [git, "config", "--file", held.name, "--list", "--null"],
                capture_output=True,
                env=git_environment(),
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    if listed.returncode != 0:
        return None
    return [os.fsdecode(line) for line in listed.stdout.split(b"\0") if line]


def _unsafe_keys(before: _Item, after: _Item) -> list[str] | None:
    """The keys a config file's change sets, changes or unsets that may start a program (none: the change
    stands); None when it cannot be told (not a file, or a file git cannot read)."""
    if before.kind != "file" or after.kind != "file" or before.mode != after.mode:
        return None
    if not isinstance(before.content, bytes) or not isinstance(after.content, bytes):
        return None
    old, new = _config_keys(before.content), _config_keys(after.content)
    if old is None or new is None:
        return None
    changed = {line.partition("\n")[0].lower() for line in set(old) ^ set(new)}
    return sorted(key for key in changed if not SAFE_KEYS.fullmatch(key))


def _git_dirs(workspace: Path) -> list[Path]:
    """The workspace's git directories: its ``.git`` folder, or the ones a ``.git`` file names (a linked
    worktree's, and the repository's common one)."""
    from chimera.core.sandbox.policy import linked_git_dirs

    dot_git = workspace / ".git"
    if dot_git.is_dir() and not dot_git.is_symlink():
        return [dot_git]
    return [Path(os.path.realpath(found)) for found in linked_git_dirs(workspace) if found.is_dir()]


def _submodules(git_dir: Path) -> Iterator[Path]:
    """The git directories of submodules under ``git_dir/modules`` (nested ones too)."""
    stack = [git_dir / "modules"]
    while stack:
        folder = stack.pop()
        try:
            entries = [entry for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
        except OSError:
            continue
        if (folder / "HEAD").is_file():
            yield folder
        stack.extend(Path(entry.path) for entry in entries if entry.name not in _SKIPPED)


def _named_in_workspace(git_dir: Path, workspace: Path) -> list[Path]:
    """What ``git_dir``'s config names in the workspace for git to read or run: the hooks folder of
    ``core.hooksPath`` (``.husky``, say) and the files ``include.path`` and ``includeIf.*.path`` take in."""
    from chimera.core.sandbox.policy import small_file

    content = small_file(git_dir / "config", _MOST_BYTES)  # a FIFO or /dev/zero there: never read
    if content is None:
        return []
    lowered = content.lower()
    if b"hookspath" not in lowered and b"include" not in lowered:
        return []
    named = []
    for line in _config_keys(content) or []:
        key, _, value = line.partition("\n")
        key = key.lower()
        if not value or not (key == "core.hookspath" or key == "include.path" or key.startswith("includeif.")):
            continue
        base = workspace if key == "core.hookspath" else git_dir  # (git reads an include beside the config)
        path = Path(os.path.realpath(base / os.path.expanduser(value)))
        if path.is_relative_to(workspace):
            named.append(path)
    return named


def _roots(workspace: Path, git_dirs: list[Path]) -> list[Path]:
    roots: list[Path] = []
    if (workspace / ".git").is_file():  # it names the git directory: pointed elsewhere, git runs that one's hooks
        roots.append(workspace / ".git")
    for git_dir in git_dirs:
        roots += [git_dir / "hooks", *(git_dir / name for name in _CONFIGS), git_dir / "commondir"]
        roots += [folder / "config.worktree" for folder in _children(git_dir / "worktrees")]
        for module in _submodules(git_dir):
            roots += [module / "hooks", *(module / name for name in _CONFIGS)]
        roots += _named_in_workspace(git_dir, workspace)
    return list(dict.fromkeys(roots))


def _children(folder: Path) -> list[Path]:
    try:
        return [Path(entry.path) for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _identity(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (stat.S_IFMT(info.st_mode), info.st_dev, info.st_ino)


class GitGuard:
    """The files that decide what git runs in ``workspace``, as they are now (:meth:`take`); :meth:`restore` puts
    back what changed since."""

    def __init__(
        self, workspace: Path, dot_git: tuple[int, int, int] | None, held: dict[Path, dict[str, _Item]]
    ) -> None:
        self.workspace = workspace
        self._dot_git = dot_git  # the identity of the workspace's .git folder (None: it has none)
        self._held = held
        self.lost = False  # the .git folder was moved away or deleted, and could not be found to put back

    @classmethod
    def take(cls, workspace: Path) -> GitGuard:
        """Read what decides which programs git runs in ``workspace`` (nothing when it has no git directory)."""
        workspace = Path(os.path.realpath(workspace))
        git_dirs = _git_dirs(workspace)
        held = {root: _read(str(root)) for root in _roots(workspace, git_dirs)}
        dot_git = _identity(workspace / ".git")
        return cls(workspace, dot_git if dot_git is not None and dot_git[0] == stat.S_IFDIR else None, held)

    def restore(self) -> list[str]:
        """Put back what changed since :meth:`take`; what was put back (paths, workspace-relative where they are
        in it; a config file with the keys that made it go back), or nothing."""
        put_back: list[str] = []
        dot_git = self.workspace / ".git"
        if self._dot_git is not None and _identity(dot_git) != self._dot_git:
            put_back.append(self._name(dot_git))
            if not self._bring_back(dot_git):
                self.lost = True
                return put_back  # the folder is gone: nothing of it to put back into
        for root, before in self._held.items():
            redirect = _redirect(root)
            if redirect is not None:  # a folder on its way is a link now: git would read or run what it points at
                redirect.rename(_free_name(redirect.with_name(f"{redirect.name}.{ASIDE}")))
                put_back.append(self._name(redirect))
                continue
            if not root.parent.is_dir():
                continue  # its folder is gone (a worktree removed, say): nothing of it is left for git to run
            after = _read(str(root))
            if after == before:
                continue
            key = str(root)
            if root.name in _CONFIGS and key in before and key in after:
                keys = _unsafe_keys(before[key], after[key])
                if keys == []:
                    continue  # only keys that run nothing
                _replace(root, before, after)
                put_back.append(f"{self._name(root)} ({', '.join(keys)})" if keys else self._name(root))
                continue
            _replace(root, before, after)
            changed = [Path(path) for path in {*before, *after} if before.get(path) != after.get(path)]
            if root in changed:  # the folder itself (gone, or a link now): named alone
                changed = [root]
            put_back += [self._name(path) for path in sorted(changed, key=lambda p: (len(p.parts), p))[:3]]
            put_back += [f"{len(changed) - 3} more"] if len(changed) > 3 else []
        return put_back

    def _bring_back(self, dot_git: Path) -> bool:
        """The workspace's ``.git`` is not the one it was: set aside what is there now, and move the original back
        when it is still at the workspace's top. Whether it is back."""
        if _identity(dot_git) is not None:
            aside = _free_name(dot_git.with_name(f".git.{ASIDE}"))
            dot_git.rename(aside)
        for entry in _children(self.workspace):
            if _identity(entry) == self._dot_git:
                entry.rename(dot_git)
                return True
        return False

    def _name(self, path: Path) -> str:
        return path.relative_to(self.workspace).as_posix() if path.is_relative_to(self.workspace) else str(path)


def _free_name(path: Path) -> Path:
    candidate, n = path, 1
    while candidate.exists() or candidate.is_symlink():
        n += 1
        candidate = path.with_name(f"{path.name}-{n}")
    return candidate


def _redirect(root: Path) -> Path | None:
    """The folder on the way to ``root`` that is a link now (all were folders when the guard took them), or None."""
    for folder in reversed(root.parents):
        try:
            if stat.S_ISLNK(folder.lstat().st_mode):
                return folder
        except OSError:
            return None
    return None


def _replace(root: Path, before: dict[str, _Item], after: dict[str, _Item]) -> None:
    """Make ``root`` what it was: ``before`` is written again (folders first). What is there now is set aside beside
    it (``NAME.refused-by-sandbox``), never deleted: a file moved in, or over a hook, may be the person's."""
    if after:
        root.rename(_free_name(root.with_name(f"{root.name}.{ASIDE}")))
    ordered = sorted(before, key=lambda p: p.count(os.sep))
    for name in ordered:
        item, path = before[name], Path(name)
        if item.kind == "dir":
            path.mkdir(mode=0o700, exist_ok=True)  # its own mode once what it holds is written
        elif item.kind == "link" and isinstance(item.content, str):
            path.symlink_to(item.content)
        elif item.kind == "file" and isinstance(item.content, bytes):
            path.write_bytes(item.content)
            path.chmod(item.mode)
    for name in reversed(ordered):
        if before[name].kind == "dir":
            os.chmod(name, before[name].mode)
