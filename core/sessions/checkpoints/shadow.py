"""Provides ``ShadowRepo``: snapshots of a workspace in a git repository outside it, and restores."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import replace
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home, private_dir
from chimera.core.sessions.checkpoints.git import (
    EMPTY_TREE,
    FIXED_DATE,
    Change,
    CheckpointError,
    Git,
    check_id,
    parse_raw,
    split,
)
from chimera.core.sessions.checkpoints.patches import is_text, lines_of, names_binary, splice, split_sections
from chimera.core.sessions.checkpoints.places import check_contents, check_git_dir, check_places
from chimera.core.sessions.checkpoints.restore import TEMP_SUFFIX, Preview, Restored, Version, apply, is_leftover, plan
from chimera.core.tools.files import open_regular
from chimera.core.tools.paths import real_path

__all__ = ["ShadowRepo"]

BATCH_BYTES = 64_000_000  # blob bytes read from git in one call while restoring
_EXCLUDE_MAX = 1_000_000  # bytes of the workspace's .git/info/exclude copied into the shadow's
_PATHS_PER_CALL = 500  # paths named on one git command line
_PATCH = ("-r", "-p", "--no-renames", "--no-color", "--no-ext-diff")  # diff-tree's options for a patch
_ABSENT = "0" * 40  # the blob of a side a path is not on
_GITLINK = "160000"  # a nested repository's commit: no content here

# Highest-precedence attributes: no clean/smudge filter, no eol or encoding conversion, so blobs are the bytes on disk.
_ATTRIBUTES = b"* -text -filter -ident -working-tree-encoding\n"
_CONFIG = b"""
# Written by Chimera: a checkpoint store whose snapshots are not kept alive by refs.
[core]
\tbare = false
\tlogAllRefUpdates = false
\thooksPath = /dev/null
[gc]
\tauto = 0
\tpruneExpire = never
[maintenance]
\tauto = false
"""
_EXCLUDE_HEADER = f"# Written by Chimera, then the workspace's .git/info/exclude\n.git\n*{TEMP_SUFFIX}\n".encode()


class ShadowRepo:
    """A git repository outside the workspace (its own git dir and index; the workspace is the work tree).

    One ``ShadowRepo`` per index at a time (the session's writer lock covers it): the first
    call removes an ``index.lock`` a killed git left behind. ``index`` is the git dir's own
    by default; a scratch copy snapshotted into the same store (a compared variant) keeps an
    index of its own, so its snapshots land among the session's and a switch finds them. Such
    a guest leaves the store's files alone (its excludes are the session's, as the workspace's
    snapshots last wrote them), so guests and the workspace's own snapshots can work at once.
    """

    def __init__(
        self,
        workspace: Path,
        git_dir: Path,
        *,
        max_file_bytes: int = 10_000_000,
        timeout: float = 120.0,
        index: Path | None = None,
    ) -> None:
        self.workspace = Path(workspace).absolute()
        self.git_dir = Path(git_dir).absolute()
        self.max_file_bytes = max_file_bytes
        check_places(self.workspace, self.git_dir)
        check_contents(self.git_dir)
        self._git = Git(self.workspace, self.git_dir, timeout, index)
        self._guest = index is not None
        # Chimera's own state (this store, the sessions) stays out of snapshots even when it lives in the workspace.
        self._header = _EXCLUDE_HEADER + b"".join(_anchored(self.workspace, d) for d in (self.git_dir, chimera_home()))
        self._ready = False
        self._last: tuple[str, str, str] | None = None  # (tree, label, commit) of the latest snapshot
        self._held: dict[str, tuple[str, str]] = {}  # path: (mode, blob), kept while the work tree has nothing there

    def snapshot(self, label: str = "") -> str:
        """The commit id of the workspace as it is now (same files and label: same id)."""
        tree = self._write_tree()
        if self._last is not None and self._last[:2] == (tree, label):
            return self._last[2]
        commit = self._git("commit-tree", tree, input=label.encode() + b"\n").decode().strip()
        self._last = (tree, label, commit)
        return commit

    def hold(self, commit: str, paths: Iterable[str]) -> None:
        """Keep ``paths`` in every snapshot from now on as snapshot ``commit`` holds them, for as long as the work
        tree has nothing in their place: entries left out of a scratch copy (links leading out of it), which are
        not the copy's to change. A path the work tree holds again (a file written there) is snapshotted as it is.
        """
        tree = self._tree_of(commit)
        wanted = sorted(set(paths))
        for start in range(0, len(wanted), _PATHS_PER_CALL):
            specs = [f":(literal){path}" for path in wanted[start : start + _PATHS_PER_CALL]]
            out = self._git("ls-tree", "-r", "-z", "--full-tree", tree, "--", *specs, work_tree=False)
            for record in split(out):
                meta, _, path = record.partition(b"\t")
                mode, kind, blob = meta.decode().split(" ")
                if kind == "blob":
                    self._held[os.fsdecode(path)] = (mode, blob)

    def present(self, target: str) -> str:
        """The snapshot :meth:`restore` of ``target`` takes of the present first: with the same files, the same id."""
        return self.snapshot(f"before restoring {target}")

    def changes(self, target: str, *, known: Iterable[Version], folders: Iterable[str] = ()) -> Preview:
        """What restoring ``target`` would do to the present workspace; changes nothing there."""
        present = self._write_tree()
        return plan(self.workspace, self._diff(present, self._tree_of(target)), target, set(known), folders)[0]

    def line_counts(self, target: str) -> dict[str, tuple[int, int]]:
        """Per path restoring ``target`` would change: the lines it adds and removes ((0, 0) for a binary file)."""
        return {path: (added, removed) for path, added, removed in self._numstat(self._write_tree(), target)}

    def restore(
        self,
        target: str,
        *,
        known: Iterable[Version],
        folders: Iterable[str] = (),
        on_before: Callable[[str], None] | None = None,
    ) -> Restored:
        """Make the workspace match ``target``, after snapshotting the present (returned, to undo).

        ``known``: (path, content) versions that may be deleted, from :meth:`seen` or :meth:`added`;
        a path whose present content is not among them stays. ``folders``: the folders the
        agent made, the only ones removed once empty. ``on_before`` gets the
        present's snapshot before any file is touched, to record it durably first; the caller
        then owns what undoes a restore cut short (CheckpointError), else the error names it.
        """
        target_tree = self._tree_of(target)
        before = self.present(target)
        changes = self._diff(self._tree_of(before), target_tree)
        preview, writes = plan(self.workspace, changes, target, set(known), folders)
        if on_before is not None:
            on_before(before)
        try:
            apply(self.workspace, preview, self._contents(writes))
        except OSError as err:
            undo = "" if on_before is not None else f": restore {before} to undo the part done"
            raise CheckpointError(
                f"restoring {target[:12]} stopped at {err.filename or 'a file'} ({err.strerror or err}){undo}"
            ) from None
        return Restored(before, preview)

    def export(self, commit: str, folder: Path) -> None:
        """Write the files of snapshot ``commit`` into ``folder`` (a scratch copy); the workspace is untouched."""
        archive = self._git("archive", "--format=tar", self._tree_of(commit), work_tree=False)
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="tar")

    def numstat(self, old: str, new: str) -> list[tuple[str, int, int]]:
        """Each path that differs from snapshot ``old`` to ``new``, with its lines added and removed (0 and 0
        for a binary file), in path order."""
        return self._numstat(self._tree_of(old), new, work_tree=False)

    def _numstat(self, old_tree: str, new: str, *, work_tree: bool = True) -> list[tuple[str, int, int]]:
        trees = old_tree, self._tree_of(new)
        out = self._git("diff-tree", "-r", "-z", "--no-renames", "--numstat", *trees, work_tree=work_tree)
        counts: dict[str, tuple[int, int]] = {}
        for record in split(out):
            added, removed, path = record.split(b"\t", 2)
            counts[os.fsdecode(path)] = (int(added), int(removed)) if added.isdigit() else (0, 0)
        # git counts no lines of a file it calls binary, --text or not: a text file's are counted from its diff
        binary = [os.fsdecode(record.split(b"\t", 2)[2]) for record in split(out) if record.startswith(b"-")]
        counts.update((path, lines_of(section)) for path, section in self._text_sections(trees, binary, work_tree))
        return sorted((path, *count) for path, count in counts.items())

    def patch(self, old: str, new: str) -> bytes:
        """The unified diff from snapshot ``old`` to ``new`` (``a/`` and ``b/`` paths). A file git calls binary
        for a NUL in it shows its lines all the same when both its sides are UTF-8 text; other binary files
        are named in one line (``patches``)."""
        trees = self._tree_of(old), self._tree_of(new)
        out = self._git("diff-tree", *_PATCH, *trees, work_tree=False)
        if not names_binary(out):
            return out
        numstat = self._git("diff-tree", "-r", "-z", "--no-renames", "--numstat", *trees, work_tree=False)
        binary = [os.fsdecode(record.split(b"\t", 2)[2]) for record in split(numstat) if record.startswith(b"-")]
        return splice(out, [section for _path, section in self._text_sections(trees, binary, False)])

    def _text_sections(self, trees: tuple[str, str], binary: list[str], work_tree: bool) -> list[tuple[str, bytes]]:
        """Of ``binary`` (files git calls binary between ``trees``), each whose every side reads as UTF-8 text,
        with its section of a ``--text`` diff."""
        found: list[tuple[str, bytes]] = []
        for start in range(0, len(binary), _PATHS_PER_CALL):
            specs = _literal(binary[start : start + _PATHS_PER_CALL])
            out = self._git("diff-tree", "-r", "-z", "--no-renames", *trees, *specs, work_tree=work_tree)
            changes = [c for c in parse_raw(out) if c.status in "AMD" and _GITLINK not in (c.mode, c.old_mode)]
            sides = [c for c in changes if c.blob != _ABSENT]
            sides += [replace(c, blob=c.old_blob) for c in changes if c.old_blob != _ABSENT]
            not_text = {
                side.path for side, content in self._contents(sides, work_tree=work_tree) if not is_text(content)
            }
            text = [c.path for c in changes if c.path not in not_text]
            if not text:
                continue
            patch = self._git("diff-tree", *_PATCH, "--text", *trees, *_literal(text), work_tree=work_tree)
            sections = split_sections(patch)
            if len(sections) == len(text):  # one section a path, in the same (tree) order
                found += zip(text, sections, strict=True)
        return found

    def files(self, commit: str) -> set[str]:
        """The paths a snapshot holds (files and symlinks)."""
        paths = set()
        for record in split(self._git("ls-tree", "-r", "-z", "--full-tree", self._tree_of(commit))):
            meta, _, path = record.partition(b"\t")
            if meta.split(b" ")[1] == b"blob":
                paths.add(os.fsdecode(path))
        return paths

    def seen(self, commits: Iterable[str]) -> set[Version]:
        """Every (path, content) any of these snapshots holds, in two git calls: a ``known`` set for a restore."""
        ids = list(dict.fromkeys(commits))
        for commit in ids:
            check_id(commit)
        if not ids:
            return set()
        self._ensure_repo()
        out = self._git(
            "cat-file", "--batch-check=%(objectname)", input="".join(f"{c}^{{tree}}\n" for c in ids).encode()
        )
        trees: list[str] = []
        for line, commit in zip(out.decode().splitlines(), ids, strict=True):
            if line.endswith(" missing"):
                raise self._git.missing(commit)
            if not trees or trees[-1] != line:
                trees.append(line)
        # Each version in tree i is in tree i-1 or added or changed since: those steps cover them all.
        pairs = "".join(f"{a} {b}\n" for a, b in zip([EMPTY_TREE, *trees], trees, strict=False))
        out = self._git("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--diff-filter=AMT", input=pairs.encode())
        return {(c.path, c.blob) for c in parse_raw(out)}

    def added(self, steps: Iterable[tuple[str, str]]) -> set[Version]:
        """What the agent's tool calls created: each path some (before, after) pair of snapshots added,
        with every content such a step left there (the creation, and its later edits by the agent)."""
        pairs = list(dict.fromkeys(steps))
        if not pairs:
            return set()
        ids = list(dict.fromkeys(commit for pair in pairs for commit in pair))
        for commit in ids:
            check_id(commit)
        self._ensure_repo()
        out = self._git(
            "cat-file", "--batch-check=%(objectname)", input="".join(f"{c}^{{tree}}\n" for c in ids).encode()
        )
        trees = dict(zip(ids, out.decode().splitlines(), strict=True))
        for commit, tree in trees.items():
            if tree.endswith(" missing"):
                raise self._git.missing(commit)
        lines = "".join(f"{trees[a]} {trees[b]}\n" for a, b in pairs if trees[a] != trees[b])
        if not lines:
            return set()
        out = self._git("diff-tree", "--stdin", "-r", "-z", "--no-renames", "--diff-filter=AMT", input=lines.encode())
        changes = parse_raw(out)
        created = {c.path for c in changes if c.status == "A"}
        return {(c.path, c.blob) for c in changes if c.path in created}

    def blobs(self, commit: str, paths: Iterable[str]) -> dict[str, str]:
        """The blob id of each of ``paths`` in snapshot ``commit`` (a path it does not hold is left out)."""
        wanted = sorted(set(paths))
        tree = self._tree_of(commit)
        found: dict[str, str] = {}
        for start in range(0, len(wanted), _PATHS_PER_CALL):
            specs = [f":(literal){path}" for path in wanted[start : start + _PATHS_PER_CALL]]
            out = self._git("ls-tree", "-r", "-z", "--full-tree", tree, "--", *specs, work_tree=False)
            for record in split(out):
                meta, _, path = record.partition(b"\t")
                kind, blob = meta.split(b" ")[1:3]
                if kind == b"blob":
                    found[os.fsdecode(path)] = blob.decode()
        return found

    def remove_leftovers(self) -> list[str]:
        """Delete the temporary files a restore killed mid-write left in the workspace; their paths."""
        self._ensure_repo()
        listed = self._git("ls-files", "-z", "--others", "--ignored", f"--exclude=*{TEMP_SUFFIX}")
        removed = []
        for raw in split(listed):
            path = os.fsdecode(raw)
            if is_leftover(path):
                (self.workspace / path).unlink(missing_ok=True)
                removed.append(path)
        return removed

    def prune(self, keep: Iterable[str]) -> int:
        """Drop every snapshot not in ``keep`` (and contents only they held), pack the rest; bytes used after."""
        ids = list(dict.fromkeys(keep))
        for commit in ids:
            check_id(commit)
        self._ensure_repo()
        kept: list[str] = []
        if ids:
            out = self._git(
                "cat-file", "--batch-check=%(objectname) %(objecttype)", input="\n".join(ids).encode() + b"\n"
            )
            kept = [line.split()[0] for line in out.decode().splitlines() if line.endswith(" commit")]
        if kept:  # one commit whose parents are the kept snapshots, under one ref: all gc needs to see
            who = f"chimera <chimera@localhost> {FIXED_DATE[1:]}"
            parents = "".join(f"parent {c}\n" for c in kept)
            body = f"tree {EMPTY_TREE}\n{parents}author {who}\ncommitter {who}\n\nsnapshots kept by Chimera\n"
            anchor = self._git("hash-object", "-t", "commit", "-w", "--stdin", input=body.encode()).decode().strip()
            self._git("update-ref", "refs/chimera/keep", anchor)
        else:
            self._git("update-ref", "-d", "refs/chimera/keep")
        self._git("gc", "--quiet", "--prune=now")  # the shadow index keeps the present's contents alive too
        self._last = None
        return self.disk_bytes()

    def disk_bytes(self) -> int:
        """Bytes the shadow repository's object store takes on disk."""
        total = 0
        for root, _dirs, names in os.walk(self.git_dir / "objects"):
            for name in names:
                try:
                    total += os.lstat(os.path.join(root, name)).st_size
                except OSError:
                    continue
        return total

    def _write_tree(self) -> str:
        """Bring the shadow index up to the workspace (only what changed is hashed); its tree id."""
        self._git.check_workspace()
        self._ensure_repo()
        if not self._guest:
            self._sync_excludes()
        listed = self._git("ls-files", "-z", "-t", "--others", "--modified", "--exclude-standard")
        excluded: list[str] = []  # nested repositories and large files
        untrack: list[bytes] = []  # tracked files that grew too large
        pending = False
        for record in split(listed):
            tag, raw = record[:1], record[2:]
            if raw.endswith(b"/"):  # a nested repository: its files are its own
                excluded.append(os.fsdecode(raw[:-1]))
                continue
            try:
                info = os.lstat(self.workspace / os.fsdecode(raw))
            except OSError:
                pending = True  # a tracked file that is gone
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size > self.max_file_bytes:
                excluded.append(os.fsdecode(raw))
                if tag == b"C":
                    untrack.append(raw)
            else:
                pending = True
        if untrack:
            self._git("update-index", "-z", "--force-remove", "--stdin", input=b"\0".join(untrack) + b"\0")
        if pending:  # an unreadable file is left out (exit 1), not fatal
            specs = [f":(exclude,literal){path}" for path in excluded]
            self._git("add", "--all", "--ignore-errors", "--", ".", *specs, ok=(0, 1))
        ignored = self._git("ls-files", "-z", "--cached", "--ignored", "--exclude-standard")
        if ignored:  # tracked before a .gitignore line covered them
            self._git("update-index", "-z", "--force-remove", "--stdin", input=ignored)
        held = [f"{mode} {blob}\t{path}\0".encode() for path, (mode, blob) in self._held.items() if self._free(path)]
        if held:  # back in the index: `add --all` took them out, as gone from the work tree
            self._git("update-index", "-z", "--add", "--index-info", input=b"".join(held))
        return self._git("write-tree").decode().strip()

    def _free(self, path: str) -> bool:
        """Whether a held ``path`` can go back in the index: nothing is at it, and every folder above it is one."""
        place = self.workspace / path
        if os.path.lexists(place):
            return False
        for folder in place.relative_to(self.workspace).parents:
            try:
                if not stat.S_ISDIR(os.lstat(self.workspace / folder).st_mode):
                    return False
            except OSError:
                return False
        return True

    def _ensure_repo(self) -> None:
        check_git_dir(self.git_dir)  # every time: Chimera writes files in it before git runs
        if self._ready:
            return
        if not (self.git_dir / "HEAD").is_file():
            private_dir(self.git_dir)
            self._git("init", "--quiet", "--bare", "--template=", str(self.git_dir), bare=True)
            _write_own(self.git_dir / "config", _CONFIG, append=True)
            info = private_dir(self.git_dir / "info")
            _write_own(info / "attributes", _ATTRIBUTES)
            _write_own(info / "exclude", self._header)
        Path(f"{self._git.index}.lock").unlink(missing_ok=True)  # left by a git killed mid-write
        self._ready = True

    def _sync_excludes(self) -> None:
        """Copy the workspace's ``.git/info/exclude`` (what the person ignores) into the shadow's."""
        try:
            with open_regular(self.workspace / ".git" / "info" / "exclude") as fh:
                theirs = fh.read(_EXCLUDE_MAX)
        except OSError:  # absent, unreadable, or not a regular file (a FIFO would block)
            theirs = b""
        ours = self.git_dir / "info" / "exclude"
        try:
            with open_regular(ours) as fh:
                if fh.read(len(self._header + theirs) + 1) == self._header + theirs:
                    return
        except OSError:
            pass
        _write_own(ours, self._header + theirs)

    def _diff(self, present: str, target: str) -> list[Change]:
        return parse_raw(self._git("diff-tree", "-r", "-z", "--no-renames", present, target))

    def _tree_of(self, commit: str) -> str:
        check_id(commit)
        self._ensure_repo()
        out = self._git("rev-parse", "--verify", "--quiet", f"{commit}^{{tree}}", ok=(0, 1))
        if not out:
            raise self._git.missing(commit)
        return out.decode().strip()

    def _contents(self, changes: list[Change], *, work_tree: bool = True) -> Iterator[tuple[Change, bytes]]:
        """Each change with its content, read from git in batches of about ``BATCH_BYTES``."""
        if not changes:
            return
        ids = "".join(f"{c.blob}\n" for c in changes).encode()
        sizes = self._git("cat-file", "--batch-check=%(objectsize)", input=ids, work_tree=work_tree)
        batch: list[Change] = []
        weight = 0
        for change, size in zip(changes, sizes.decode().split(), strict=True):
            batch.append(change)
            weight += int(size)
            if weight >= BATCH_BYTES or change is changes[-1]:
                ids = "".join(f"{c.blob}\n" for c in batch).encode()
                out = self._git("cat-file", "--batch", input=ids, work_tree=work_tree)
                pos = 0
                for item in batch:  # "<id> blob <size>\n<content>\n" each
                    header_end = out.index(b"\n", pos)
                    size_of = int(out[pos:header_end].split(b" ")[2])
                    yield item, out[header_end + 1 : header_end + 1 + size_of]
                    pos = header_end + 1 + size_of + 1
                batch, weight = [], 0


def _literal(paths: list[str]) -> list[str]:
    """``paths`` as the pathspecs after ``--`` that name exactly them."""
    return ["--", *(f":(literal){path}" for path in paths)]


def _write_own(path: Path, data: bytes, *, append: bool = False) -> None:
    """Write ``data`` to a file of the shadow repository, never through a link."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_APPEND if append else os.O_TRUNC)
    fd = os.open(path, flags, 0o600)
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def _anchored(workspace: Path, folder: Path) -> bytes:
    """A gitignore line matching exactly ``folder`` when it lies inside the workspace, else nothing."""
    try:
        rel = real_path(folder).relative_to(real_path(workspace)).as_posix()
    except ValueError:
        return b""
    if rel == "." or "\n" in rel:
        raise ConfigError(
            f"{folder} cannot be left out of the workspace's snapshots: set CHIMERA_HOME to another folder"
        )
    return ("/" + "".join(f"\\{c}" if c in "\\*?[]!# " else c for c in rel) + "/\n").encode()
