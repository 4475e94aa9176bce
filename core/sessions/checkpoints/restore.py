"""Provides the file side of a restore: the plan a preview shows, and carrying it out without losing work.

A path absent from the target is deleted only when the caller's ``known`` set
holds the path *with its present content*: a file recreated or edited since by
someone else is not the version that was seen, so it stays. A folder the
deletions leave empty is removed only when the caller's ``folders`` holds it
(Chimera's ``write`` made it); any other stays as it is, and the preview lists
it as kept. A path the target has is written only when nothing that no
snapshot holds is in the way (a large, ignored or unreadable file, a kept file
or folder) and no folder on the way is a symlink. Each file is written to a
temporary name and renamed, so it is either old or new.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chimera.core.sessions.checkpoints.folders import EmptiedFolders
from chimera.core.sessions.checkpoints.git import Change

__all__ = ["TEMP_SUFFIX", "Preview", "Restored", "Version", "apply", "is_leftover", "plan"]

Version = tuple[str, str]
"""(path, blob id): one content a path held in some snapshot."""

TEMP_SUFFIX = ".chimera-tmp"
_LEFTOVER = re.compile(r"\..{0,40}\.[0-9a-f]{8}" + re.escape(TEMP_SUFFIX), re.DOTALL)
GITLINK = "160000"


@dataclass(frozen=True)
class Preview:
    """What restoring ``target`` does to the workspace as it is now; every path relative to the workspace."""

    target: str
    rewrite: tuple[str, ...] = ()
    """Present now with other content, mode or type: rewritten with the target's."""
    create: tuple[str, ...] = ()
    """In the target, missing now: written."""
    delete: tuple[str, ...] = ()
    """Present now, absent from the target, and a known snapshot saw them as they are: deleted."""
    keep: tuple[str, ...] = ()
    """Present now, absent from the target, and not as a known snapshot saw them: left alone."""
    skip: tuple[str, ...] = ()
    """In the target, but the place is held by something no snapshot holds (a large, ignored or
    unreadable file, a kept file or folder, a symlink on the way): left alone."""
    keep_folders: tuple[str, ...] = ()
    """Folders the deletions leave with no file in them that the agent did not make: kept as they are."""
    remove_folders: tuple[str, ...] = ()
    """Folders the agent's ``write`` made that the deletions leave empty: removed, deepest first."""

    @property
    def changed(self) -> tuple[str, ...]:
        """Every path the restore writes or deletes, sorted."""
        return tuple(sorted((*self.rewrite, *self.create, *self.delete)))


@dataclass(frozen=True)
class Restored:
    """A finished restore: the snapshot taken just before it (restore it to undo) and what was done."""

    before: str
    preview: Preview


def plan(
    workspace: Path, changes: list[Change], target: str, known: set[Version], folders: Iterable[str] = ()
) -> tuple[Preview, list[Change]]:
    """The preview of going from the present to the target, and the target entries to write.

    ``folders``: the folders the agent made, the only ones that may be removed.
    """
    changes = [c for c in changes if GITLINK not in (c.old_mode, c.mode)]  # nested repositories are theirs
    gone = [c for c in changes if c.status == "D"]
    delete = {c.path for c in gone if (c.path, c.old_blob) in known}
    keep = {c.path for c in gone} - delete
    emptied = EmptiedFolders(workspace, delete, folders)
    rewrite: set[str] = set()
    create: set[str] = set()
    skip: set[str] = set()
    for change in changes:
        if change.status == "D":
            continue
        if not safe_path(change.path) or not _reachable(workspace, change.path, delete):
            skip.add(change.path)
        elif change.status == "A":
            (create if _free(workspace, change.path, emptied) else skip).add(change.path)
        else:
            rewrite.add(change.path)
    remove_folders, keep_folders = emptied.plan()
    preview = Preview(
        target,
        rewrite=tuple(sorted(rewrite)),
        create=tuple(sorted(create)),
        delete=tuple(sorted(delete)),
        keep=tuple(sorted(keep)),
        skip=tuple(sorted(skip)),
        keep_folders=keep_folders,
        remove_folders=remove_folders,
    )
    return preview, [c for c in changes if c.path in rewrite or c.path in create]


def apply(workspace: Path, preview: Preview, contents: Iterable[tuple[Change, bytes]]) -> None:
    """Delete, remove the agent's emptied folders, then write each change with its content; OSError stops it."""
    for path in preview.delete:
        full = workspace / path
        if safe_path(path) and _reachable(workspace, path, set()) and (full.is_symlink() or full.is_file()):
            full.unlink()
    for folder in preview.remove_folders:  # deepest first
        if safe_path(folder) and _reachable(workspace, folder, set()):
            with contextlib.suppress(OSError):  # something was put there since the preview: it stays
                os.rmdir(workspace / folder)
    for change, data in contents:
        _write(workspace, change, data)


def is_leftover(path: str) -> bool:
    """True for the name of a temporary file :func:`apply` writes before renaming it into place."""
    return _LEFTOVER.fullmatch(path.rsplit("/", 1)[-1]) is not None


def safe_path(path: str) -> bool:
    """True for a relative path with no empty, ``.``, ``..`` or ``.git`` part."""
    parts = path.split("/")
    return not path.startswith("/") and all(p not in ("", ".", "..") and p.lower() != ".git" for p in parts)


def _reachable(workspace: Path, path: str, delete: set[str]) -> bool:
    """True when every folder on the way to ``path`` is a real folder, missing, or a file being deleted."""
    parts = path.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        prefix = "/".join(parts[:i])
        if prefix in delete:
            return True
        try:
            mode = os.lstat(workspace / prefix).st_mode
        except FileNotFoundError:
            return True
        except OSError:
            return False
        if not stat.S_ISDIR(mode):
            return False
    return True


def _free(workspace: Path, path: str, emptied: EmptiedFolders) -> bool:
    """True when nothing holds ``path`` now, or only a folder of the agent's that the deletions empty."""
    full = workspace / path
    try:
        mode = os.lstat(full).st_mode
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(mode):
        return False  # a file no snapshot could hold (too large, ignored, unreadable)
    return emptied.removable(path)


def _write(workspace: Path, change: Change, data: bytes) -> None:
    """Write one path atomically (temporary file, then rename), never through a symlink."""
    if not safe_path(change.path) or not _reachable(workspace, change.path, set()):
        return
    full = workspace / change.path
    full.parent.mkdir(parents=True, exist_ok=True)
    try:
        old: os.stat_result | None = os.lstat(full)
    except FileNotFoundError:
        old = None
    if old is not None and stat.S_ISDIR(old.st_mode):
        os.rmdir(full)  # planned only for a folder of the agent's that the deletions emptied
        old = None
    tmp = full.with_name(f".{full.name[:40]}.{secrets.token_hex(4)}{TEMP_SUFFIX}")
    try:
        if change.mode == "120000":
            os.symlink(data, os.fsencode(tmp))
        else:
            executable = change.mode == "100755"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            with os.fdopen(os.open(tmp, flags, 0o777 if executable else 0o666), "wb") as handle:
                handle.write(data)
                if old is not None and stat.S_ISREG(old.st_mode):  # keep the person's permissions, set the x bits
                    perms = stat.S_IMODE(old.st_mode)
                    os.chmod(handle.fileno(), perms | (perms & 0o444) >> 2 if executable else perms & ~0o111)
        os.replace(tmp, full)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
