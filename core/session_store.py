"""Provides ``SessionStore``: a session's tree on disk, crash-safe and private.

Each session is a folder under ``CHIMERA_HOME/sessions`` holding
``entries.jsonl``: append-only JSON lines, the source of truth. Why JSON lines
and not SQLite: a session is written by one process and read whole; appends
are one ``write`` each, a torn tail is easy to see and set aside, and the file
stays readable with ``grep`` and ``jq``. Records:

* ``{"t": "meta", ...}`` first: session id, workspace, model, creation time
  (a later meta record updates a field, such as a moved workspace, or the
  ``permissions`` the runs that follow were started with: mode, allow, deny);
* ``{"t": "node", "id", "parent", "kind", "ts", "message"}``: a message;
* ``{"t": "partial", "parent", "result"}``: one finished tool result, kept before
  its batch is complete (a crash mid-batch loses no finished result);
* ``{"t": "snap", "id", "commit", "found"?, "wrote"?, "made"?}``: the workspace snapshot
  pinned to a node (``found``: taken on resume, not right after the node's tool calls;
  ``wrote``: ``{path: blob}`` for each path Chimera's ``write``/``edit`` wrote in the
  batch; ``made``: the paths ``write`` created);
* ``{"t": "switching", "from", "to", "undo", "target"?}``: files are about to change for a
  switch to snapshot ``target``, the present saved as ``undo``;
* ``{"t": "leaf", "id", "ts", "from"?, "undo"?}``: the leaf moved (a switch is
  finished); ``undo`` holds the files as they were at ``from`` (null: before the
  first message);
* ``{"t": "label", "id", "label"}``: a named checkpoint (the name moves to this node).

Every record is one complete line written in one call and flushed; the file
is fsynced at turn boundaries and before anything destructive. Secrets
(``redactor``, set by whoever opens the store for a run) are masked in every
record as it is written, whoever writes it. A write that
fails is cut back, so no record is ever glued to the next. On open, a
last line without its newline (a write cut short) is moved to a ``torn-*``
file beside it and the log is cut back to its last whole record; a damaged
line in the middle is skipped and reported, never deleted. Every record read
back (``session_records``) is checked whole before any of it counts: a record
of the wrong shape, a time that is not a finite time, a node that repeats an
id or names a parent the session lacks, a leaf, label, snapshot or partial
result naming a node it lacks, are each skipped with one warning, so the tree
can never loop and every walk of it ends; text that is not Unicode (a lone
surrogate) reads as U+FFFD. One writer at a time holds the session's lock; a
second gets a clear message. Files and folders are readable by their owner only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.checkpoints import ShadowRepo
from chimera.core.errors import ConfigError, SessionError
from chimera.core.home import private_dir
from chimera.core.jsonl import append_line, set_aside_torn_tail
from chimera.core.permissions import PermissionPolicy
from chimera.core.redact import Redactor
from chimera.core.session_records import ID, add_node, apply_record, parse_record
from chimera.core.session_tree import MESSAGE_KINDS, Node, SessionTree

__all__ = ["CHECKPOINTS", "SessionInfo", "SessionStore", "list_sessions", "sessions_dir"]

ENTRIES = "entries.jsonl"
LOCK = "lock"
CHECKPOINTS = "checkpoints.git"  # the session's shadow repository of workspace snapshots
MAX_WARNINGS = 20  # damaged lines reported one by one; past these, one line counts the rest


class _Leaf:
    """``add``'s default parent: wherever the leaf is."""


LEAF = _Leaf()


def sessions_dir(home: Path) -> Path:
    return private_dir(home / "sessions")


def _node_id() -> str:
    return uuid.uuid4().hex[:10]


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of ``chimera sessions``."""

    id: str
    title: str
    workdir: str
    created: float
    updated: float
    entries: int
    leaf: str | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "workdir": self.workdir,
            "created": self.created,
            "updated": self.updated,
            "entries": self.entries,
            "leaf": self.leaf,
        }


class SessionStore:
    """One session, open for reading (``writable=False``) or for appending under its lock."""

    def __init__(
        self,
        folder: Path,
        meta: dict[str, Any],
        tree: SessionTree,
        *,
        lock_fd: int | None = None,
        warnings: list[str] | None = None,
    ) -> None:
        """Use :meth:`create` or :meth:`open`; ``lock_fd`` (held) makes the store writable."""
        self.folder = folder
        self.meta = meta
        self.tree = tree
        self.warnings = warnings or []
        self._lock_fd = lock_fd
        self.redactor = Redactor()  # secrets masked in every record written
        self._fd = os.open(folder / ENTRIES, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600) if lock_fd else None

    # --- opening ------------------------------------------------------------------------

    @classmethod
    def create(cls, home: Path, session_id: str, *, workdir: Path, model: str) -> SessionStore:
        """Start a new session folder with its meta record."""
        folder = sessions_dir(home) / session_id
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:
            raise ConfigError(f"a session {session_id} already exists") from None
        meta = {"t": "meta", "session_id": session_id, "workdir": str(workdir), "model": model, "created": time.time()}
        store = cls(folder, meta, SessionTree(), lock_fd=_lock(folder, session_id))
        store._write(meta, sync=True)
        return store

    @classmethod
    def open(cls, home: Path, session_id: str, *, writable: bool = True) -> SessionStore:
        """Open an existing session; set a torn last record aside; lock it when ``writable``."""
        if not ID.fullmatch(session_id):
            raise ConfigError(f"there is no session {session_id!r}: `chimera sessions` lists them")
        folder = sessions_dir(home) / session_id
        path = folder / ENTRIES
        lock_fd: int | None = None
        try:
            if not path.is_file():
                if path.exists() or path.is_symlink():
                    raise ConfigError(f"session {session_id} is damaged: {path} is not a file")
                if folder.is_dir():
                    raise ConfigError(f"{folder} has no {ENTRIES}: it is not a Chimera session (left untouched)")
                raise ConfigError(f"there is no session {session_id!r}: `chimera sessions` lists them")
            lock_fd = _lock(folder, session_id) if writable else None
            meta, tree, warnings = _load(path, repair=writable)
            return cls(folder, meta, tree, lock_fd=lock_fd, warnings=warnings)
        except BaseException as err:
            if lock_fd is not None:
                os.close(lock_fd)
            if isinstance(err, OSError):
                raise ConfigError(
                    f"session {session_id} cannot be read ({err.strerror or err}): check the permissions of {folder}"
                ) from None
            raise

    # --- reading ------------------------------------------------------------------------

    @property
    def id(self) -> str:
        return str(self.meta.get("session_id", self.folder.name))

    @property
    def workdir(self) -> Path:
        return Path(str(self.meta.get("workdir", ".")))

    @property
    def title(self) -> str:
        for node in self.tree.nodes.values():
            if node.kind == "user":
                return node.summary
        return "(empty)"

    def checkpoints(self) -> ShadowRepo:
        """The session's shadow repository of workspace snapshots (ConfigError without git)."""
        return ShadowRepo(self.workdir, self.folder / CHECKPOINTS)

    # --- writing ------------------------------------------------------------------------

    def add(self, kind: str, message: dict[str, Any], *, parent: str | _Leaf | None = LEAF, sync: bool = False) -> Node:
        """Append a message as a child of ``parent`` (the leaf by default; None: a new root); it becomes the leaf."""
        if kind not in MESSAGE_KINDS:
            raise ValueError(f"unknown node kind {kind!r}")
        parent_id = self.tree.leaf if isinstance(parent, _Leaf) else parent
        node = Node(id=_node_id(), parent_id=parent_id, kind=kind, ts=time.time(), message=message)
        record = {"t": "node", "id": node.id, "parent": parent_id, "kind": kind, "ts": node.ts, "message": message}
        self._write(record, sync=sync)
        add_node(node, self.meta, self.tree)
        return node

    def record(self, kind: str, message: dict[str, Any], *, sync: bool = False) -> str:
        """The agent loop's recorder: append at the leaf, return the new node's id."""
        return self.add(kind, message, sync=sync).id

    def record_result(self, parent_id: str, block: dict[str, Any]) -> None:
        """Keep one finished tool result of ``parent_id``'s calls before the whole batch is done."""
        self._write({"t": "partial", "parent": parent_id, "result": block})
        self.tree.partials.setdefault(parent_id, []).append(block)

    def children_of(self, node_id: str | None) -> int:
        return len(self.tree.children.get(node_id, []))

    def move_leaf(self, node_id: str | None, *, undo: str | None = None) -> None:
        """Make ``node_id`` the leaf (None: before the first message); recorded and synced.

        ``undo`` is the snapshot of the files as they were at the leaf being left.
        """
        if node_id is not None:
            node_id = self.require(node_id)
        record: dict[str, Any] = {"t": "leaf", "id": node_id, "ts": time.time()}
        if undo is not None:
            record.update({"from": self.tree.leaf, "undo": undo})
        self._write(record, sync=True)
        apply_record(record, self.meta, self.tree)

    def begin_switch(self, to_node: str | None, undo: str, target: str) -> None:
        """Record, durably, that files are about to change for a switch (so a crash midway is seen).

        ``undo`` holds the files as they are now; ``target`` the snapshot about to be written.
        """
        record = {"t": "switching", "from": self.tree.leaf, "to": to_node, "undo": undo, "target": target}
        self._write(record, sync=True)
        apply_record(record, self.meta, self.tree)

    def label(self, node_id: str, label: str) -> None:
        node_id = self.require(node_id)
        self._write({"t": "label", "id": node_id, "label": label}, sync=True)
        self.tree.set_label(node_id, label)

    def pin(
        self,
        node_id: str,
        commit: str,
        *,
        found: bool = False,
        wrote: dict[str, str] | None = None,
        made: Iterable[str] = (),
    ) -> None:
        """Record that ``commit`` holds the workspace as it was at ``node_id``.

        ``found``: the files as found later (on resume after a crash), not as the node's
        tool calls left them, so nothing in them counts as the agent's creation.
        ``wrote``: the paths Chimera's ``write``/``edit`` wrote in the batch the node answers,
        each with its blob in ``commit``; ``made``: those that ``write`` created.
        """
        node_id = self.require(node_id)
        record: dict[str, Any] = {"t": "snap", "id": node_id, "commit": commit}
        if found:
            record["found"] = True
        if wrote:
            record["wrote"] = wrote
        if made := sorted(made):
            record["made"] = made
        self._write(record)
        apply_record(record, self.meta, self.tree)

    def set_permissions(self, policy: PermissionPolicy) -> None:
        """Record the permissions the runs from now on start with (replay re-runs tools under no looser ones)."""
        permissions = {
            "mode": policy.mode,
            "allow": [str(r) for r in policy.allow],
            "deny": [str(r) for r in policy.deny],
        }
        if self.meta.get("permissions") != permissions:
            self._write({"t": "meta", "permissions": permissions}, sync=True)
            self.meta["permissions"] = permissions

    def set_workdir(self, workdir: Path) -> None:
        """The session's workspace moved: record where it is now."""
        record = {"t": "meta", "workdir": str(workdir)}
        self._write(record, sync=True)
        self.meta["workdir"] = str(workdir)

    def sync(self) -> None:
        """Make everything written so far durable (a turn boundary, or before something destructive)."""
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._fd)
            os.close(self._fd)
            self._fd = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def require(self, ref: str) -> str:
        """The node id ``ref`` names (an id or a checkpoint label); ConfigError naming the session if none."""
        node_id = self.tree.resolve(ref)
        if node_id is None:
            raise ConfigError(f"session {self.id} has no node {ref!r}: `chimera tree {self.id}` lists them")
        return node_id

    def _write(self, record: dict[str, Any], *, sync: bool = False) -> None:
        """Append one whole record, or nothing: a failed write is cut back so no record is ever glued."""
        if self._fd is None:
            raise RuntimeError("this session was opened read-only")
        record = self.redactor.mask_value(record)
        line = (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
        try:
            append_line(self._fd, line, sync=sync)
        except OSError as err:
            raise SessionError(
                f"could not save session {self.id} ({err.strerror or err}): free some disk space; "
                "what was saved before is intact"
            ) from None


def _lock(folder: Path, session_id: str) -> int:
    fd = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "another process"
        os.close(fd)
        raise ConfigError(
            f"session {session_id} is open in another Chimera (pid {holder}): close it there first"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def _load(path: Path, *, repair: bool) -> tuple[dict[str, Any], SessionTree, list[str]]:
    warnings: list[str] = []
    if repair and (aside := set_aside_torn_tail(path)) is not None:
        warnings.append(aside)
    data = path.read_bytes()
    end = data.rfind(b"\n") + 1
    if end < len(data):
        warnings.append(f"the last record is cut short ({len(data) - end} bytes) and is ignored")
    meta: dict[str, Any] = {}
    tree = SessionTree()
    damaged = 0
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            apply_record(parse_record(line), meta, tree)
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            damaged += 1
            if damaged <= MAX_WARNINGS:
                why = "nested too deeply" if isinstance(err, RecursionError) else str(err).strip("'\"")
                warnings.append(f"line {number} is damaged and was skipped ({why})")
    if damaged > MAX_WARNINGS:
        warnings.append(f"{damaged - MAX_WARNINGS} more damaged lines were skipped")
    if not meta:
        raise ConfigError(f"{path} has no session header: it is not a Chimera session (left untouched)")
    return meta, tree, warnings


def list_sessions(home: Path, problems: list[str] | None = None) -> list[SessionInfo]:
    """Every readable session under ``home``, most recently updated first.

    Each folder that cannot be read as a session adds one line to ``problems`` (when given)
    saying why; the others are listed all the same.
    """
    out = []
    for folder in _session_folders(home):
        try:
            if not folder.is_dir() or not ID.fullmatch(folder.name):
                raise ConfigError(f"{folder} is not a session folder (left untouched)")
            store = SessionStore.open(home, folder.name, writable=False)
            updated = (folder / ENTRIES).stat().st_mtime
        except ConfigError as err:
            if problems is not None:
                problems.append(str(err))
            continue
        except OSError as err:
            if problems is not None:
                problems.append(f"session {folder.name} cannot be read ({err.strerror or err}): check {folder}")
            continue
        out.append(
            SessionInfo(
                id=store.id,
                title=store.title,
                workdir=str(store.workdir),
                created=float(store.meta.get("created", 0.0)),
                updated=updated,
                entries=len(store.tree),
                leaf=store.tree.leaf,
            )
        )
    out.sort(key=lambda info: info.updated, reverse=True)
    return out


def _session_folders(home: Path) -> Iterator[Path]:
    """Every entry of the sessions folder but hidden ones (each should be a session's folder)."""
    folder = home / "sessions"
    if folder.is_dir():
        yield from sorted(p for p in folder.iterdir() if not p.name.startswith("."))
