"""Provides ``SessionStore``: a session's tree on disk, crash-safe and private.

Each session is a folder under ``CHIMERA_HOME/sessions`` holding
``entries.jsonl``: append-only JSON lines, the source of truth. Why JSON lines
and not SQLite: a session is written by one process and read whole; appends
are one ``write`` each, a torn tail is easy to see and set aside, and the file
stays readable with ``grep`` and ``jq``. Records:

* ``{"t": "meta", ...}`` first: session id, workspace, model, creation time
  (a later meta record updates a field, such as a moved workspace);
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
is fsynced at turn boundaries and before anything destructive. A write that
fails is cut back, so no record is ever glued to the next. On open, a
last line without its newline (a write cut short) is moved to a ``torn-*``
file beside it and the log is cut back to its last whole record; a damaged
line in the middle is skipped and reported, never deleted. One writer at a
time holds the session's lock; a second gets a clear message. Files and
folders are readable by their owner only.
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
from chimera.core.session_tree import MESSAGE_KINDS, Node, PendingSwitch, SessionTree

__all__ = ["CHECKPOINTS", "SessionInfo", "SessionStore", "list_sessions", "sessions_dir"]

ENTRIES = "entries.jsonl"
LOCK = "lock"
CHECKPOINTS = "checkpoints.git"  # the session's shadow repository of workspace snapshots


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
        folder = sessions_dir(home) / session_id
        path = folder / ENTRIES
        if not path.is_file():
            raise ConfigError(f"there is no session {session_id!r}: `chimera sessions` lists them")
        lock_fd = _lock(folder, session_id) if writable else None
        try:
            meta, tree, warnings = _load(path, repair=writable)
            return cls(folder, meta, tree, lock_fd=lock_fd, warnings=warnings)
        except BaseException:
            if lock_fd is not None:
                os.close(lock_fd)
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
        self.tree.add(node)
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
        _apply(record, self.meta, self.tree)

    def begin_switch(self, to_node: str | None, undo: str, target: str) -> None:
        """Record, durably, that files are about to change for a switch (so a crash midway is seen).

        ``undo`` holds the files as they are now; ``target`` the snapshot about to be written.
        """
        record = {"t": "switching", "from": self.tree.leaf, "to": to_node, "undo": undo, "target": target}
        self._write(record, sync=True)
        _apply(record, self.meta, self.tree)

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
        _apply(record, self.meta, self.tree)

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
    for number, line in enumerate(data[:end].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = _parse(line)
            _apply(record, meta, tree)
        except (ValueError, KeyError, TypeError) as err:
            warnings.append(f"line {number} is damaged and was skipped ({err})")
    if not meta:
        raise ConfigError(f"{path} has no session header: it is not a Chimera session (left untouched)")
    return meta, tree, warnings


_NODE_HEAD = b'{"t":"node",'
_MESSAGE_KEY = b',"message":{'
_HEAD_MAX = 400  # bytes: a node record's id, parent, kind and time come well within this
_HEAD_KEYS = frozenset({"t", "id", "parent", "kind", "ts"})


def _parse(line: bytes) -> dict[str, Any]:
    """One record. A node record laid out as this store writes it (its message last) is read
    only up to the message, and keeps the whole line as ``raw`` for the message to be decoded
    when needed; any other line is decoded whole."""
    if line.startswith(_NODE_HEAD):
        cut = line.find(_MESSAGE_KEY, 0, _HEAD_MAX)
        if cut > 0:
            try:
                head = json.loads(line[:cut] + b"}")
            except ValueError:
                head = None
            if isinstance(head, dict) and head.keys() == _HEAD_KEYS:
                head["raw"] = line
                return head
    parsed: dict[str, Any] = json.loads(line)
    return parsed


def _apply(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> None:
    """Fold one record into the session; raise ValueError/KeyError/TypeError when it is malformed."""
    kind = record["t"]
    if kind == "node":
        parent = record["parent"]
        if parent is not None and parent not in tree:
            raise KeyError(f"parent {parent} is unknown")
        if record["kind"] not in MESSAGE_KINDS:
            raise ValueError("not a message")
        raw = record.get("raw")
        if raw is not None:
            node = Node(str(record["id"]), parent, record["kind"], float(record["ts"]), raw=raw)
        else:
            message = record["message"]
            if not isinstance(message, dict) or "role" not in message:
                raise ValueError("not a message")
            node = Node(str(record["id"]), parent, record["kind"], float(record["ts"]), message)
        tree.add(node)
    elif kind == "leaf":
        target = record["id"]
        if target is None or target in tree:
            if record.get("undo") and "from" in record:
                tree.undo[_point(record["from"])] = str(record["undo"])
            tree.leaf = target
            tree.pending_switch = None
    elif kind == "switching":
        target = record.get("target")
        from_node = _point(record["from"])
        tree.pending_switch = PendingSwitch(
            from_node, _point(record["to"]), str(record["undo"]), None if target is None else str(target)
        )
        tree.undo[from_node] = str(record["undo"])
    elif kind == "label":
        tree.set_label(str(record["id"]), str(record["label"]))
    elif kind == "snap":
        node_id = str(record["id"])
        tree.snapshots[node_id] = str(record["commit"])
        if record.get("found"):
            tree.found.add(node_id)
        if wrote := record.get("wrote"):
            tree.wrote[node_id] = {str(path): str(blob) for path, blob in dict(wrote).items()}
        if made := record.get("made"):
            tree.made[node_id] = frozenset(str(path) for path in made)
    elif kind == "partial":
        parent = str(record["parent"])
        if parent in tree and not any(tree.nodes[c].kind == "tool_result" for c in tree.children.get(parent, [])):
            tree.partials.setdefault(parent, []).append(dict(record["result"]))
    elif kind == "meta":
        if not isinstance(record.get("created", 0.0), int | float):
            raise TypeError("created must be a number")
        meta.update(record)


def _point(node_id: object) -> str | None:
    """A place in the tree as recorded: a node id, or None (before the first message)."""
    return None if node_id is None else str(node_id)


def list_sessions(home: Path) -> list[SessionInfo]:
    """Every session under ``home``, most recently updated first."""
    out = []
    for folder in _session_folders(home):
        try:
            store = SessionStore.open(home, folder.name, writable=False)
        except (ConfigError, OSError):
            continue  # not a session we can read: `chimera tree ID` on it says why
        updated = (folder / ENTRIES).stat().st_mtime
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
    folder = home / "sessions"
    if folder.is_dir():
        yield from (p for p in folder.iterdir() if (p / ENTRIES).is_file())
