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
line in the middle is skipped and reported, never deleted. Every field read
back is checked before it is used: a record of the wrong shape, a node that
repeats an id or names a parent the session lacks, a leaf, label, snapshot or
partial result naming a node it lacks, are each skipped with one warning, so
the tree can never loop and every walk of it ends. One writer at a
time holds the session's lock; a second gets a clear message. Files and
folders are readable by their owner only.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
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
from chimera.core.permissions import MODES, PermissionPolicy, Rule
from chimera.core.redact import Redactor
from chimera.core.session_tree import MESSAGE_KINDS, Node, PendingSwitch, SessionTree, message_problem

__all__ = ["CHECKPOINTS", "SessionInfo", "SessionStore", "list_sessions", "sessions_dir"]

ENTRIES = "entries.jsonl"
LOCK = "lock"
CHECKPOINTS = "checkpoints.git"  # the session's shadow repository of workspace snapshots
MAX_WARNINGS = 20  # damaged lines reported one by one; past these, one line counts the rest
_ID = re.compile(r"[\w.:-]{1,128}", re.ASCII)  # session and node ids
_COMMIT = re.compile(r"[0-9a-f]{7,64}")


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
        if not _ID.fullmatch(session_id):
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
        _add_node(node, self.meta, self.tree)
        return node

    def record(self, kind: str, message: dict[str, Any], *, parent: str | None, sync: bool = False) -> str:
        """The agent loop's recorder: append after ``parent`` (where its context stands), return the new node's id."""
        return self.add(kind, message, parent=parent, sync=sync).id

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
            _apply(_parse(line), meta, tree)
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
    parsed = json.loads(line)
    if not isinstance(parsed, dict):
        raise ValueError(f"a JSON {type(parsed).__name__}, not a record")
    parsed.pop("raw", None)  # only a record read up to its message carries its line
    return parsed


def _text(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"its {key} is not text")
    return value


def _node_ref(record: dict[str, Any], key: str, tree: SessionTree) -> str:
    """The node ``record[key]`` names, which the session must hold."""
    value = record.get(key)
    if not isinstance(value, str):
        raise ValueError(f"its {key} is not a node id")
    if value not in tree:
        raise ValueError(f"its {key} names node {value[:40]!r}, which the session does not hold")
    return value


def _optional_ref(record: dict[str, Any], key: str, tree: SessionTree) -> str | None:
    """Like :func:`_node_ref`, with None (no node: before the first message) allowed."""
    return None if record.get(key) is None else _node_ref(record, key, tree)


def _commit(record: dict[str, Any], key: str) -> str:
    value = record.get(key)
    if not isinstance(value, str) or not _COMMIT.fullmatch(value):
        raise ValueError(f"its {key} is not a snapshot id")
    return value


def _add_node(node: Node, meta: dict[str, Any], tree: SessionTree) -> None:
    tree.add(node)
    if node.kind == "user" and "permissions" in meta:
        tree.permissions[node.id] = meta["permissions"]


def _apply(record: dict[str, Any], meta: dict[str, Any], tree: SessionTree) -> None:
    """Fold one record into the session; raise ValueError/KeyError/TypeError when it is malformed."""
    kind = record.get("t")
    if not isinstance(kind, str):
        raise ValueError("it has no record type")
    if kind == "node":
        node_id = _text(record, "id")
        if not _ID.fullmatch(node_id):
            raise ValueError("its id is not a node id")
        if node_id in tree:
            raise ValueError(f"it repeats the id of node {node_id}")
        parent = _optional_ref(record, "parent", tree)
        node_kind = record.get("kind")
        if node_kind not in MESSAGE_KINDS:
            raise ValueError("its kind is not a message kind")
        ts = record.get("ts")
        if not isinstance(ts, int | float) or isinstance(ts, bool):
            raise ValueError("its time is not a number")
        raw = record.get("raw")
        if raw is not None:
            node = Node(node_id, parent, node_kind, float(ts), raw=raw)
        else:
            message = record.get("message")
            problem = message_problem(node_kind, message)
            if problem is not None:
                raise ValueError(problem)
            assert isinstance(message, dict)
            node = Node(node_id, parent, node_kind, float(ts), message)
        _add_node(node, meta, tree)
    elif kind == "leaf":
        target = _optional_ref(record, "id", tree)
        if record.get("undo") and "from" in record:
            tree.undo[_optional_ref(record, "from", tree)] = _commit(record, "undo")
        tree.leaf = target
        tree.pending_switch = None
    elif kind == "switching":
        from_node = _optional_ref(record, "from", tree)
        to_node = _optional_ref(record, "to", tree)
        undo = _commit(record, "undo")
        target = None if record.get("target") is None else _commit(record, "target")
        tree.pending_switch = PendingSwitch(from_node, to_node, undo, target)
        tree.undo[from_node] = undo
    elif kind == "label":
        node_id = _node_ref(record, "id", tree)
        tree.set_label(node_id, _text(record, "label"))
    elif kind == "snap":
        node_id = _node_ref(record, "id", tree)
        tree.snapshots[node_id] = _commit(record, "commit")
        if record.get("found"):
            tree.found.add(node_id)
        wrote = record.get("wrote")
        if wrote is not None:
            if not isinstance(wrote, dict) or not all(
                isinstance(blob, str) and _COMMIT.fullmatch(blob) for blob in wrote.values()
            ):
                raise ValueError("its written paths do not map to contents")
            tree.wrote[node_id] = dict(wrote)
        made = record.get("made")
        if made is not None:
            if not isinstance(made, list) or not all(isinstance(path, str) for path in made):
                raise ValueError("its created paths are not a list of paths")
            tree.made[node_id] = frozenset(made)
    elif kind == "partial":
        parent = _node_ref(record, "parent", tree)
        result = record.get("result")
        if message_problem("tool_result", {"role": "user", "content": [result]}) is not None:
            raise ValueError("its result is not a tool result")
        assert isinstance(result, dict)
        if result["type"] != "tool_result":
            raise ValueError("its result is not a tool result")
        if not any(tree.nodes[c].kind == "tool_result" for c in tree.children.get(parent, [])):
            tree.partials.setdefault(parent, []).append(dict(result))
    elif kind == "meta":
        _check_meta(record, meta)
        meta.update(record)


def _check_meta(record: dict[str, Any], meta: dict[str, Any]) -> None:
    """ValueError unless every field a meta record carries has its type; the first must name the session."""
    first = not meta
    if (first or "session_id" in record) and _text(record, "session_id") != meta.get(
        "session_id", record["session_id"]
    ):
        raise ValueError("it names another session")
    if (first or "workdir" in record) and not Path(_text(record, "workdir")).is_absolute():
        raise ValueError("its workdir is not an absolute path")
    if "model" in record:
        _text(record, "model")
    created = record.get("created", 0.0)
    if not isinstance(created, int | float) or isinstance(created, bool):
        raise ValueError("its created time is not a number")
    if "permissions" in record:
        permissions = record["permissions"]
        if not isinstance(permissions, dict) or permissions.get("mode") not in MODES:
            raise ValueError("its permissions have no known mode")
        for key in ("allow", "deny"):
            rules = permissions.get(key)
            if not isinstance(rules, list) or not all(isinstance(r, str) for r in rules):
                raise ValueError(f"its permissions' {key} is not a list of rules")
            for rule in rules:
                try:
                    Rule.parse(rule)
                except ConfigError as err:
                    raise ValueError(str(err)) from None


def list_sessions(home: Path, problems: list[str] | None = None) -> list[SessionInfo]:
    """Every readable session under ``home``, most recently updated first.

    Each folder that cannot be read as a session adds one line to ``problems`` (when given)
    saying why; the others are listed all the same.
    """
    out = []
    for folder in _session_folders(home):
        try:
            if not folder.is_dir() or not _ID.fullmatch(folder.name):
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
