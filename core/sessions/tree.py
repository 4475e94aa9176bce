"""Provides ``SessionTree``: a session's conversation as a tree, rebuilt from its records.

Nodes are messages (``user``, ``assistant``, ``tool_result``, ``compaction``);
each has a parent, so every node is a point to branch from. The *leaf* is
where the conversation stands; the model's context is the path from the root
to the leaf (``sessions.reading`` reads it, and says what each node is), less
the user messages *left out* of it (a task the server refused, the model
declined, or the person interrupted before any answer: kept, marked, never sent
again). Moving the leaf is itself a record, so a reopened session lands where the
person was. Checkpoint names name nodes (a name is on one node at a time,
and a node may carry several); workspace snapshots pin the files as they were at a node;
*undo* snapshots hold the files as they were when the person last switched away
from a node (or from before the first message, the ``None`` point); *saved*
files are snapshots under a name of their own (what an undo of a cut-short
switch found), no point's files.

A node read from disk keeps its message as the JSON bytes of its record until
something needs it, so opening a session costs its structure, not the bytes of
every message in it.

This module only holds and reads the tree; ``store`` writes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from chimera.core.errors import SessionError
from chimera.core.messages import content_blocks
from chimera.core.strict_json import loads_clean

__all__ = [
    "LEFT_OUT_REASONS",
    "MESSAGE_KINDS",
    "QUEUE_KINDS",
    "Node",
    "PendingSwitch",
    "Queued",
    "SavedFiles",
    "SessionTree",
    "message_problem",
]

MESSAGE_KINDS = frozenset({"user", "assistant", "tool_result", "compaction"})
QUEUE_KINDS = ("steer", "follow_up")
LEFT_OUT_REASONS = ("refused", "declined", "interrupted")
"""Why words no answer followed are left out of the conversation: the server refused the request (an HTTP 4xx
other than a rate limit), the model declined it, or the person interrupted the run before an answer."""


_BLOCK_FIELDS = {
    "text": (("text", str),),
    "thinking": (("thinking", str),),
    "tool_use": (("id", str), ("name", str)),
    "tool_result": (("tool_use_id", str),),
}


def message_problem(kind: str, message: object) -> str | None:
    """What is wrong with ``message`` as the message of a ``kind`` node read from disk, or None when it is sound.

    Sound: an object with ``role`` (``assistant`` exactly for assistant nodes, else ``user``)
    and ``content`` (text, or a list of blocks, each an object whose fields the readers use
    have their types).
    """
    if not isinstance(message, dict):
        return "not a message"
    role = message.get("role")
    if role != ("assistant" if kind == "assistant" else "user"):
        return f"a {kind} message with role {role!r}"
    return _content_problem(message.get("content"), nested=False)


def _content_problem(content: object, *, nested: bool) -> str | None:
    if isinstance(content, str):
        return None
    if not isinstance(content, list):
        return "its content is neither text nor a list of blocks"
    for block in content:
        kind = block.get("type") if isinstance(block, dict) else None
        if not isinstance(kind, str):
            return "a content block is not an object with a type"
        for name, kind_of in _BLOCK_FIELDS.get(kind, ()):
            if not isinstance(block.get(name), kind_of):
                return f"a {kind} block has no {name}"
        if kind == "tool_result":
            if nested:
                return "a tool_result block inside another"
            problem = _content_problem(block.get("content", ""), nested=True)
            if problem is not None or not isinstance(block.get("is_error", False), bool):
                return "a tool_result block's content or is_error has the wrong type"
    return None


class Node:
    """One message in the tree: its place (``id``, ``parent_id``), ``kind``, time, and the message itself.

    ``raw``, instead of ``message``, is the node's whole record as saved (a JSON object whose
    ``message`` is the message, from byte ``at`` on): it is decoded on first use, and a record
    that does not decode to a sound message is a :class:`SessionError`.
    """

    __slots__ = ("_at", "_message", "_raw", "id", "kind", "parent_id", "ts")

    def __init__(
        self,
        id: str,
        parent_id: str | None,
        kind: str,
        ts: float,
        message: dict[str, Any] | None = None,
        *,
        raw: bytes | None = None,
        at: int = 0,
    ) -> None:
        if (message is None) == (raw is None):
            raise TypeError("a node needs its message or its raw JSON, not both")
        self.id = id
        self.parent_id = parent_id
        self.kind = kind
        self.ts = ts
        self._message = message
        self._raw = raw
        self._at = at

    def __repr__(self) -> str:
        return f"Node(id={self.id!r}, parent_id={self.parent_id!r}, kind={self.kind!r})"

    @property
    def message(self) -> dict[str, Any]:
        """The message (``role`` and ``content``), decoded from the record the first time."""
        if self._message is None:
            try:
                message = _message_of(self._raw or b"", self._at)
            except ValueError as err:
                raise self._damaged(str(err)) from None
            except RecursionError:
                raise self._damaged("nested too deeply") from None
            problem = message_problem(self.kind, message)
            if problem is not None:
                raise self._damaged(problem)
            assert isinstance(message, dict)
            self._message, self._raw = message, None
        return self._message

    def _damaged(self, why: str) -> SessionError:
        return SessionError(f"the record of message {self.id} is damaged ({why}): switch to a point before it")

    @property
    def tool_calls(self) -> list[str]:
        """The ids of the tool calls an assistant message makes."""
        return [b["id"] for b in content_blocks(self.message.get("content")) if b.get("type") == "tool_use"]


def _message_of(record: bytes, at: int) -> object:
    """The message of a node's ``record``: the JSON from ``at`` on when the message ends the record, as the store
    writes it (the record is not decoded twice); otherwise (a key after it, say) from the whole record."""
    body = record if record.endswith(b"}") else record.rstrip()
    if at and body.endswith(b"}"):
        try:
            return loads_clean(body[at:-1])
        except ValueError:
            pass  # something follows the message: the record's own decoding says what
    whole = loads_clean(record)
    return whole.get("message") if isinstance(whole, dict) else None


@dataclass(frozen=True, slots=True)
class PendingSwitch:
    """A switch that began changing files and has no record of finishing.

    ``undo`` holds the files as they were before it; ``target`` the snapshot it was
    writing (None when recorded by a Chimera that did not say).
    """

    from_node: str | None
    to_node: str | None
    undo: str
    target: str | None = None


@dataclass(frozen=True, slots=True)
class SavedFiles:
    """Files saved under a name of their own, not as any point's: the half-restored files an undo found.

    ``node`` is the point a switch to them lands on (None: before the first message).
    """

    commit: str
    node: str | None


@dataclass(frozen=True, slots=True)
class Queued:
    """Words the person queued: ``steer`` (for the run going) or ``follow_up`` (a task for after it)."""

    kind: str
    text: str
    vouch: str | None = None  # this Chimera's seal over it (received.py); None: not sealed


@dataclass(slots=True)
class SessionTree:
    """The nodes of one session, their children, the leaf, checkpoint names and snapshots."""

    nodes: dict[str, Node] = field(default_factory=dict)
    children: dict[str | None, list[str]] = field(default_factory=dict)
    leaf: str | None = None
    names: dict[str, str] = field(default_factory=dict)
    """Checkpoint names, each naming one node (a node may carry several), in the order given."""
    snapshots: dict[str, str] = field(default_factory=dict)
    undo: dict[str | None, str] = field(default_factory=dict)
    """The files as the person last left each point (None: before the first message)."""
    partials: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    found: set[str] = field(default_factory=set)
    """Nodes pinned to the files as found on resume, not as their tool calls left them."""
    permissions: dict[str, dict[str, Any]] = field(default_factory=dict)
    """The permissions (``mode``, ``allow``, ``deny``) in force when each user node was recorded."""
    wrote: dict[str, dict[str, str]] = field(default_factory=dict)
    """Per tool-results node: each path Chimera's ``write``/``edit`` wrote in that batch, with the blob it left."""
    made: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per tool-results node: the paths Chimera's ``write`` created in that batch (they did not exist before)."""
    folders: dict[str, frozenset[str]] = field(default_factory=dict)
    """Per tool-results node: the folders Chimera's ``write`` made in that batch (they did not exist before)."""
    pending_switch: PendingSwitch | None = None
    saved: dict[str, SavedFiles] = field(default_factory=dict)
    """Files saved under a name (``chimera switch ID NAME`` brings them back), by name."""
    kept: dict[str, str] = field(default_factory=dict)
    """Per compaction node: the node from which the conversation before it is kept as it was."""
    queued: dict[str, Queued] = field(default_factory=dict)
    """The person's words queued for a run and not yet taken (steering, follow-ups), in order, by id."""
    left_out: dict[str, str] = field(default_factory=dict)
    """User messages kept in the tree but left out of the model's context, each with why (:data:`LEFT_OUT_REASONS`):
    the words of a run that ended with no answer to them."""

    def add(self, node: Node, *, aside: bool = False) -> None:
        """Hold ``node``; it becomes the leaf unless it is recorded ``aside`` (beside the person's place)."""
        self.nodes[node.id] = node
        self.children.setdefault(node.parent_id, []).append(node.id)
        if not aside:
            self.leaf = node.id
        if node.kind == "tool_result" and node.parent_id is not None:
            self.partials.pop(node.parent_id, None)

    def set_label(self, node_id: str, label: str) -> None:
        """Name ``node_id`` ``label``: a name is on one node (it moves here); the node keeps its other names."""
        self.names.pop(label, None)
        self.names[label] = node_id

    def labels_of(self, node_id: str) -> list[str]:
        """The names on ``node_id``, oldest first."""
        return [name for name, node in self.names.items() if node == node_id]

    def labelled(self) -> dict[str, list[str]]:
        """Every named node's names, oldest first, by node."""
        out: dict[str, list[str]] = {}
        for name, node in self.names.items():
            out.setdefault(node, []).append(name)
        return out

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def path(self, node_id: str | None = None) -> list[Node]:
        """The nodes from the root to ``node_id`` (the leaf when None)."""
        current = self.leaf if node_id is None else node_id
        out = list(self.ancestors(current)) if current is not None else []
        out.reverse()
        return out

    def ancestors(self, node_id: str) -> Iterator[Node]:
        """``node_id`` and its ancestors, nearest first.

        Bounded: a chain that names a missing node, or loops, is a :class:`SessionError`
        (the store never builds one: a node is added only after its parent, ids unique).
        """
        current: str | None = node_id
        for _ in range(len(self.nodes) + 1):
            if current is None:
                return
            node = self.nodes.get(current)
            if node is None:
                raise SessionError(f"the session has no node {current}: its record is missing or damaged")
            yield node
            current = node.parent_id
        raise SessionError(f"the ancestors of node {node_id} form a loop: the session's records are damaged")

    def snapshot_for(self, node_id: str) -> str | None:
        """The workspace snapshot that pins ``node_id``: its own, or its nearest ancestor's."""
        for node in self.ancestors(node_id):
            if node.id in self.snapshots:
                return self.snapshots[node.id]
        return None

    def agent_steps(self) -> Iterable[tuple[str, str]]:
        """(before, after) snapshot pairs around every batch of tool calls that could change files.

        A batch cut short by a crash has no such pair: its files were pinned only on resume,
        when the person may have made files of their own. What appeared in a step is not
        the agent's for that alone (a command may run while the person works):
        :meth:`agent_versions` says what is.
        """
        for node in self.nodes.values():
            parent = node.parent_id
            if node.kind == "tool_result" and parent is not None and node.id in self.snapshots:
                if node.id in self.found:
                    continue
                before = self.snapshots.get(parent)
                if before is not None:
                    yield before, self.snapshots[node.id]

    def agent_versions(self) -> set[tuple[str, str]]:
        """The (path, blob) versions that are the agent's own creations, safe for a switch to delete.

        A path counts once Chimera's ``write`` created it (it did not exist before), and
        only with a content that its ``write``/``edit`` calls left there, in that batch or
        a later one down the same branch. Files that merely appeared while a command ran,
        and every file of a session recorded before Chimera noted what its tools wrote,
        count as nobody's: they are kept.
        """
        if not self.made:
            return set()
        made_by: dict[str, frozenset[str]] = {}  # per node: paths write created on the way to it
        versions: set[tuple[str, str]] = set()
        for node in self.nodes.values():  # parents come before their children
            made = made_by.get(node.parent_id, frozenset()) if node.parent_id is not None else frozenset()
            if node.id in self.made:
                made = made | self.made[node.id]
            made_by[node.id] = made
            for path, blob in self.wrote.get(node.id, {}).items():
                if path in made:
                    versions.add((path, blob))
        return versions

    def agent_folders(self) -> frozenset[str]:
        """The folders Chimera's ``write`` made anywhere in the session: the only ones a switch may remove
        (once nothing is left in them). Every other folder, empty or not, is kept as it is."""
        return frozenset[str]().union(*self.folders.values())

    def referenced(self) -> set[str]:
        """Every snapshot something refers to: pins, undo snapshots, saved files, a pending switch's;
        packing keeps exactly these."""
        keep = set(self.snapshots.values()) | set(self.undo.values()) | {s.commit for s in self.saved.values()}
        if self.pending_switch is not None:
            keep.add(self.pending_switch.undo)
            if self.pending_switch.target is not None:
                keep.add(self.pending_switch.target)
        return keep

    def open_calls(self) -> list[str]:
        """Ids of the leaf's tool calls that have no result (the process stopped, or the person moved back)."""
        if self.leaf is None or self.nodes[self.leaf].kind != "assistant":
            return []
        return self.nodes[self.leaf].tool_calls

    def resolve(self, ref: str) -> str | None:
        """The node ``ref`` names: a node id, or a checkpoint's name (on one node at most)."""
        if ref in self.nodes:
            return ref
        return self.names.get(ref)

    def is_branch_point(self, node_id: str | None) -> bool:
        return len(self.children.get(node_id, [])) > 1
