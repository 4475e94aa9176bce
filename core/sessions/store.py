"""Provides ``SessionStore``: a session's tree on disk, crash-safe and private.

Each session is a folder under ``CHIMERA_HOME/sessions`` holding
``entries.jsonl``: append-only JSON lines, the source of truth. Why JSON lines
and not SQLite: a session is written by one process and read whole; appends
are one ``write`` each, a torn tail is easy to see and set aside, and the file
stays readable with ``grep`` and ``jq``. Records:

* ``{"t": "meta", ...}`` first: session id, workspace, model, creation time
  (a later meta record updates a field, such as a moved workspace, or the
  ``permissions`` the runs that follow were started with: mode, allow, deny);
  the workspace is sealed (``vouch``: see ``received.py``) when this Chimera wrote it;
* ``{"t": "node", "id", "parent", "kind", "ts", "keep"?, "queued"?, "aside"?, "message"}``: a message, which
  becomes the leaf (a compaction's ``keep`` names the node from which the conversation before it is kept;
  ``aside``: recorded beside the leaf, which stays where it is: a compared variant's message, so no moment
  has the person's place on a variant's branch);
* ``{"t": "queued", "id", "kind", "text", "vouch"}``: words the person queued (``steer``,
  ``follow_up``), sealed as this Chimera's, kept until a node delivers them (its ``queued`` names them) or
  an ``{"t": "unqueued", "id"}`` gives them back;
* ``{"t": "partial", "parent", "result"}``: one finished tool result, kept before
  its batch is complete (a crash mid-batch loses no finished result);
* ``{"t": "snap", "id", "commit", "found"?, "wrote"?, "made"?, "folders"?}``: the workspace
  snapshot pinned to a node (``found``: taken on resume, not right after the node's tool
  calls; ``wrote``: ``{path: blob}`` for each path Chimera's ``write``/``edit`` wrote in the
  batch; ``made``: the paths ``write`` created; ``folders``: the folders it made);
* ``{"t": "switching", "from", "to", "undo", "target"?}``: files are about to change for a
  switch to snapshot ``target``, the present saved as ``undo``;
* ``{"t": "leaf", "id", "ts", "from"?, "undo"?}``: the leaf moved (a switch is
  finished); ``undo`` holds the files as they were at ``from`` (null: before the
  first message);
* ``{"t": "label", "id", "label"}``: a named checkpoint (the name moves to this node);
* ``{"t": "saved", "name", "commit", "node"}``: files saved under a name of their own (the
  half-restored files an undo found), which a switch to ``name`` brings back at ``node``;
* ``{"t": "left_out", "ids", "why"}``: user messages a run ended with no answer to, kept in the tree and
  left out of the model's context (``why``: ``refused``, ``declined``, ``interrupted``).

A new session can wait for its first record before anything of it is on disk
(``create(deferred=True)``: the workbench, so a launch quit before any task leaves
no session). Every record is one complete line written in one call and flushed; the file
is fsynced at turn boundaries and before anything destructive. Secrets
(``redactor``, set by whoever opens the store for a run) are masked in every
record as it is written, whoever writes it. A write that fails is cut back,
and a file that does not end in a newline gets one before the next record, so
no record is ever glued to another. On open, a last line without its newline
is kept when it is a whole JSON object (the file just ends), and given its
newline; one cut short mid-write is moved to a ``torn-*`` file beside it and
the log is cut back to its last whole record; a damaged
line in the middle is skipped and reported, never deleted. Every record read
back (``session_records``) is checked whole before any of it counts: a record
of the wrong shape, a time that is not a finite time, a node that repeats an
id or names a parent the session lacks, a leaf, label, snapshot or partial
result naming a node it lacks, are each skipped with one warning, so the tree
can never loop and every walk of it ends; text that is not Unicode (a lone
surrogate) reads as U+FFFD. One writer at a time holds the session's lock; a
second gets a clear message. Files and folders are readable by their owner only.
The folder and every file in it are opened as :mod:`chimera.core.sessions.files`
says: never through a link, never a FIFO, folder or device, so nothing outside
the session folder is ever read or written through it.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from chimera.core.errors import ConfigError, SessionError
from chimera.core.gc_pause import collecting_later
from chimera.core.home import private_dir
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.redact import Redactor
from chimera.core.sessions.catalog import note_session
from chimera.core.sessions.checkpoints import ShadowRepo
from chimera.core.sessions.files import CHECKPOINTS, ENTRIES, check_folder, check_not_link, open_file
from chimera.core.sessions.jsonl import append_line
from chimera.core.sessions.loading import load_entries
from chimera.core.sessions.reading import Damaged, Task, read_node, summary
from chimera.core.sessions.received import Unconfirmed, home_key, seal, unconfirmed, unsealed_queue
from chimera.core.sessions.records import ID, add_node, apply_record, check_record
from chimera.core.sessions.session_ids import recorded_id, resolve_session
from chimera.core.sessions.session_lock import hold_session
from chimera.core.sessions.tree import MESSAGE_KINDS, Node, Queued, SessionTree
from chimera.core.wording import command

__all__ = ["CHECKPOINTS", "SessionStore", "sessions_dir"]


class _Leaf:
    """``add``'s default parent: wherever the leaf is."""


LEAF = _Leaf()


def sessions_dir(home: Path) -> Path:
    return private_dir(home / "sessions")


def _check_named(folder: Path, meta: dict[str, Any]) -> None:
    """ConfigError when the session in ``folder`` records another id than the folder's name: a folder renamed
    or copied under another name would be opened as a session it is not (catalogued, written, resumed so)."""
    recorded = meta.get("session_id")
    if recorded == folder.name:
        return
    if isinstance(recorded, str) and ID.fullmatch(recorded):
        raise ConfigError(
            f"the session folder {folder.name} holds session {recorded}: a session folder renamed or copied under "
            f"another name is damaged and left untouched: rename it back to {recorded} (or remove it)"
        )
    raise ConfigError(
        f"the session folder {folder.name} records an id that is no session id: it is damaged and left untouched "
        f"(remove {folder})"
    )


def _node_id() -> str:
    return uuid.uuid4().hex[:10]


class SessionStore:
    """One session, open for reading (``writable=False``) or for appending under its lock."""

    def __init__(
        self,
        folder: Path,
        meta: dict[str, Any],
        tree: SessionTree,
        *,
        lock_fd: int | None = None,
        fd: int | None = None,
        warnings: list[str] | None = None,
        updated: float = 0.0,
        key: bytes | None = None,
    ) -> None:
        """Use :meth:`create` or :meth:`open`; ``lock_fd`` (held) and ``fd`` (the entries, open to append)
        make the store writable."""
        self.folder = folder
        self.meta = meta
        self.tree = tree
        self.warnings = warnings or []
        self.updated = updated  # when the entries last changed, as the file says
        self._lock_fd = lock_fd
        self.redactor = Redactor()  # secrets masked in every record written
        self._fd = fd
        self._key = key  # this Chimera's seal for what it writes (received.py)
        self._unborn: list[dict[str, Any]] | None = None  # a deferred new session's records, none on disk yet
        self._wrote = False  # whether this handle appended anything (its catalog line is then brought up to date)
        self._birth = threading.Lock()

    # --- opening ------------------------------------------------------------------------

    @classmethod
    def create(cls, home: Path, session_id: str, *, workdir: Path, model: str, deferred: bool = False) -> SessionStore:
        """Start a new session folder with its meta record.

        ``deferred``: nothing is written until the session's first record (its first message or queued
        words; meta records before it are written then, after the header), so a session nobody used leaves nothing
        behind.
        """
        folder = sessions_dir(home) / session_id  # the home exists from here: its key can be kept in it
        key = home_key(home)
        meta = {"t": "meta", "session_id": session_id, "workdir": str(workdir), "model": model, "created": time.time()}
        meta["vouch"] = seal(key, "workdir", session_id, str(workdir))
        store = cls(folder, dict(meta), SessionTree(), updated=time.time(), key=key)
        store._unborn = [meta]  # its header, and the records written before it comes to disk
        if not deferred:
            store.ensure_on_disk()
        return store

    @property
    def on_disk(self) -> bool:
        """Whether the session exists on disk (False only for a deferred new session with nothing written yet)."""
        return self._unborn is None

    def ensure_on_disk(self) -> None:
        """Create a new session's folder, lock and header now, with the meta records written before (as they
        would have been written), if they are not there yet; from any thread."""
        if self._unborn is None:
            return
        with self._birth:
            if self._unborn is None:
                return
            try:
                self.folder.mkdir(mode=0o700)
            except FileExistsError:
                raise ConfigError(f"a session {self.id} already exists") from None
            except OSError as err:
                raise SessionError(f"could not save session {self.id} ({err.strerror or err})") from None
            lock_fd = hold_session(self.folder, self.id)
            try:
                fd = open_file(self.folder, ENTRIES, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_EXCL)
            except BaseException:
                os.close(lock_fd)
                raise
            self._lock_fd, self._fd = lock_fd, fd
            pending = self._unborn
            pending[0]["created"] = self.meta["created"] = time.time()  # the header: made now
            for n, record in enumerate(pending, start=1):
                self._append(record, sync=n == len(pending))
            self._unborn = None

    @classmethod
    def open(cls, home: Path, session_id: str, *, writable: bool = True) -> SessionStore:
        """Open an existing session, named by its id or the id's unique beginning (``session_ids``); set a
        torn last record aside; lock it when ``writable``.

        ConfigError, naming the file and what to do, when the folder or one of its files is a
        link or not of its kind (a FIFO, a folder, a device): nothing there is ever followed; and
        when the folder's name is not the id its session records (renamed or copied: damaged).
        """
        session_id = resolve_session(sessions_dir(home), session_id)
        folder = sessions_dir(home) / session_id
        lock_fd: int | None = None
        fd: int | None = None
        try:
            if not check_folder(folder):
                raise ConfigError(f"there is no session {session_id!r}: `chimera sessions` lists them")
            if check_not_link(folder / ENTRIES) is None:
                raise ConfigError(f"{folder} has no {ENTRIES}: it is not a Chimera session (left untouched)")
            if (recorded := recorded_id(folder)) is not None:  # before anything is locked, repaired or written
                _check_named(folder, {"session_id": recorded})
            lock_fd = hold_session(folder, session_id) if writable else None
            fd = open_file(folder, ENTRIES, os.O_RDWR | os.O_APPEND if writable else os.O_RDONLY)
            with collecting_later():  # a record is a few objects; many records, many collector walks
                meta, tree, warnings = load_entries(fd, folder, repair=writable)
            _check_named(folder, meta)
            updated = os.fstat(fd).st_mtime
            if not writable:
                os.close(fd)
                fd = None
            return cls(
                folder, meta, tree, lock_fd=lock_fd, fd=fd, warnings=warnings, updated=updated, key=home_key(home)
            )
        except BaseException as err:
            for held in (fd, lock_fd):
                if held is not None:
                    os.close(held)
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
        """The session's first task, in a line (what ``chimera sessions`` lists it by)."""
        for node in self.tree.nodes.values():
            if node.kind == "user" and isinstance(reading := read_node(node), Task | Damaged):
                return summary(reading)
        return "(empty)"

    def checkpoints(self) -> ShadowRepo:
        """The session's shadow repository of workspace snapshots, in its own folder and nowhere else.

        ConfigError without git; when the session folder or its ``checkpoints.git`` is a link
        or not a folder (so git could be sent to another repository, the workspace's ``.git``
        say); or when the session's workspace lies among the sessions (a restore would
        rewrite session files).
        """
        check_folder(self.folder)
        sessions = os.path.realpath(self.folder.parent)
        workdir = os.path.realpath(self.workdir)
        if workdir == sessions or workdir.startswith(sessions + os.sep):
            raise ConfigError(
                f"session {self.id}'s workspace {self.workdir} lies among Chimera's sessions, which no "
                "checkpoint may rewrite: start a session in the project's own folder"
            )
        return ShadowRepo(self.workdir, self.folder / CHECKPOINTS)

    # --- writing ------------------------------------------------------------------------

    def add(
        self,
        kind: str,
        message: dict[str, Any],
        *,
        parent: str | _Leaf | None = LEAF,
        sync: bool = False,
        keep: str | None = None,
        queued: str | None = None,
        aside: bool = False,
    ) -> Node:
        """Append a message as a child of ``parent`` (the leaf by default; None: a new root); it becomes the leaf,
        unless it is recorded ``aside`` (the leaf stays where it is, in the same record).

        ``keep``: for a compaction, the node from which the conversation before it is kept as it was.
        ``queued``: the queued words (by id) this message delivers, taken off the queue by the same record.
        """
        if kind not in MESSAGE_KINDS:
            raise ValueError(f"unknown node kind {kind!r}")
        parent_id = self.tree.leaf if isinstance(parent, _Leaf) else parent
        node = Node(id=_node_id(), parent_id=parent_id, kind=kind, ts=time.time(), message=message)
        record: dict[str, Any] = {"t": "node", "id": node.id, "parent": parent_id, "kind": kind, "ts": node.ts}
        if keep is not None:
            record["keep"] = keep
        if queued is not None:
            record["queued"] = queued
        if aside:
            record["aside"] = True
        record["message"] = message  # last: a reader takes the record's head without decoding the message
        self._write(record, sync=sync)
        add_node(node, self.meta, self.tree, aside=aside)
        if keep is not None:
            self.tree.kept[node.id] = keep
        if queued is not None:
            self.tree.queued.pop(queued, None)
        return node

    def record(
        self,
        kind: str,
        message: dict[str, Any],
        *,
        parent: str | None,
        sync: bool = False,
        queued: str | None = None,
        aside: bool = False,
    ) -> str:
        """The agent loop's recorder: append after ``parent`` (where its context stands), return the new node's id.

        ``queued``: the id of the queued words the message delivers (see :meth:`queue`); ``aside``: the leaf
        stays where it is (see :meth:`add`)."""
        return self.add(kind, message, parent=parent, sync=sync, queued=queued, aside=aside).id

    def queue(self, kind: str, text: str) -> str:
        """Keep words the person queued (``steer`` or ``follow_up``) until a message delivers them; their id.

        Durable at once: a crash before they are delivered loses none (a resumed session has them)."""
        queue_id = f"q{_node_id()}"
        vouch = seal(self._key, "queued", self.id, queue_id, kind, self.redactor.mask(text))  # as it is written
        self._write({"t": "queued", "id": queue_id, "kind": kind, "text": text, "vouch": vouch}, sync=True)
        self.tree.queued[queue_id] = Queued(kind, text, vouch)
        return queue_id

    def unqueue(self, queue_id: str) -> None:
        """Queued words given back to the person (an interrupt): no longer waiting."""
        if queue_id in self.tree.queued:
            self._write({"t": "unqueued", "id": queue_id}, sync=True)
            del self.tree.queued[queue_id]

    def record_compaction(
        self, message: dict[str, Any], *, parent: str | None, keep: str | None, aside: bool = False
    ) -> str:
        """The agent loop's recorder: a compaction's summary after ``parent``, keeping the
        conversation from node ``keep`` on (nothing when None); the new node's id. ``aside`` as for :meth:`add`."""
        return self.add("compaction", message, parent=parent, sync=True, keep=keep, aside=aside).id

    def record_result(self, parent_id: str, block: dict[str, Any]) -> None:
        """Keep one finished tool result of ``parent_id``'s calls before the whole batch is done."""
        self._write({"t": "partial", "parent": parent_id, "result": block})
        self.tree.partials.setdefault(parent_id, []).append(block)

    def children_of(self, node_id: str | None) -> int:
        return len(self.tree.children.get(node_id, []))

    def move_leaf(self, node_id: str | None, *, undo: str | None = None, sync: bool = True) -> None:
        """Make ``node_id`` the leaf (None: before the first message); recorded (and synced, unless ``sync`` is
        False: a record that only puts the leaf back where it was, after a message recorded beside it).

        ``undo`` is the snapshot of the files as they were at the leaf being left.
        """
        if node_id is not None:
            node_id = self.require(node_id)
        record: dict[str, Any] = {"t": "leaf", "id": node_id, "ts": time.time()}
        if undo is not None:
            record.update({"from": self.tree.leaf, "undo": undo})
        self._write(record, sync=sync)
        apply_record(record, self.meta, self.tree)

    def begin_switch(self, to_node: str | None, undo: str, target: str) -> None:
        """Record, durably, that files are about to change for a switch (so a crash midway is seen).

        ``undo`` holds the files as they are now; ``target`` the snapshot about to be written.
        """
        record = {"t": "switching", "from": self.tree.leaf, "to": to_node, "undo": undo, "target": target}
        self._write(record, sync=True)
        apply_record(record, self.meta, self.tree)

    def save_files(self, name: str, commit: str, node: str | None) -> None:
        """Record, durably, that snapshot ``commit`` holds files saved as ``name``; a switch there lands at ``node``."""
        record = {"t": "saved", "name": name, "commit": commit, "node": node}
        self._write(record, sync=True)
        apply_record(record, self.meta, self.tree)

    def leave_out(self, node_ids: Iterable[str], why: str) -> None:
        """Keep the user messages ``node_ids`` in the tree but out of the model's context from now on (``why``:
        one of ``LEFT_OUT_REASONS``); durable at once. ValueError, nothing written, for any other message."""
        record = {"t": "left_out", "ids": list(node_ids), "why": why}
        check_record(record, self.meta, self.tree)  # before it is written: a record that would be skipped never is
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
        folders: Iterable[str] = (),
    ) -> None:
        """Record that ``commit`` holds the workspace as it was at ``node_id``.

        ``found``: the files as found later (on resume after a crash), not as the node's
        tool calls left them, so nothing in them counts as the agent's creation.
        ``wrote``: the paths Chimera's ``write``/``edit`` wrote in the batch the node answers,
        each with its blob in ``commit``; ``made``: those that ``write`` created; ``folders``:
        the folders ``write`` made.
        """
        node_id = self.require(node_id)
        record: dict[str, Any] = {"t": "snap", "id": node_id, "commit": commit}
        if found:
            record["found"] = True
        if wrote:
            record["wrote"] = wrote
        if made := sorted(made):
            record["made"] = made
        if folders := sorted(folders):
            record["folders"] = folders
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
        """Record where the session's workspace is now (it moved, or the person confirmed it), sealed as ours."""
        vouch = seal(self._key, "workdir", self.id, str(workdir))
        self._write({"t": "meta", "workdir": str(workdir), "vouch": vouch}, sync=True)
        self.meta.update(workdir=str(workdir), vouch=vouch)

    def unconfirmed(self, named: Path | None) -> Unconfirmed:
        """What this session holds that this Chimera did not write (its workdir, unless the person named it
        with ``named`` or works there now; its queued words without a seal): see ``received.py``."""
        return unconfirmed(self._key, self.id, self.meta, self.tree.queued, named)

    def drop_unsealed_queue(self) -> None:
        """Give up the queued words this Chimera did not write (the person declined them)."""
        for queue_id in unsealed_queue(self._key, self.id, self.tree.queued):
            self.unqueue(queue_id)

    def sync(self) -> None:
        """Make everything written so far durable (a turn boundary, or before something destructive)."""
        if self._fd is not None:
            os.fsync(self._fd)

    def close(self) -> None:
        """Sync and let go of the session; one this handle wrote to gets its catalog line brought up to date
        (while its lock is still held, so the line describes the entries as they are)."""
        if self._wrote:
            self._wrote = False
            note_session(self)
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
            raise ConfigError(f"session {self.id} has no node {ref!r}: {command('tree', self.id)} lists them")
        return node_id

    def _write(self, record: dict[str, Any], *, sync: bool = False) -> None:
        """Append one whole record, or nothing: a failed write is cut back so no record is ever glued.

        A deferred new session comes to disk with its first record; a meta record before that
        joins the header instead."""
        if self._unborn is not None:
            if record.get("t") == "meta":  # kept until the session comes to disk, and written then
                self._unborn.append(record)
                return
            self.ensure_on_disk()
        self._append(record, sync=sync)
        self.updated = time.time()
        self._wrote = True

    def _append(self, record: dict[str, Any], *, sync: bool) -> None:
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
