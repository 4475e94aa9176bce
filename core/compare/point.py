"""Provides ``StartPoint``: where a comparison starts in a session, with what files and which task.

A point is named as a switch names it (a node id or a checkpoint's name) and
lands where a switch would: a person's message means just before it (so its
task can be run again), an assistant message that called tools means after
their results. The files are those a switch there would bring back: the ones
the person left there, else the snapshot pinned to the point or its nearest
ancestor; a point with none is refused, since a variant works on a copy of
them and never on the person's workspace. The default task is the person's
message right after the point (on the active path when the point has several).
"""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.context import Context
from chimera.core.errors import ConfigError
from chimera.core.sessions.reading import Task, model_context, read_node
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import SessionTree
from chimera.core.terminal_text import is_blank
from chimera.core.wording import command

__all__ = ["StartPoint", "files_at", "start_point"]


@dataclass(frozen=True, slots=True)
class StartPoint:
    """A comparison's start: the ``node`` its variants branch from (None: before the first message), the
    conversation there, the snapshot of its files, and the task (None when no message follows it)."""

    ref: str
    node: str | None
    context: Context
    snapshot: str
    task: str | None


def _landing(tree: SessionTree, node_id: str) -> str | None:
    node = tree.nodes[node_id]
    if node.kind == "user":
        return node.parent_id
    if node.kind == "assistant" and node.tool_calls:
        results = [c for c in tree.children.get(node_id, []) if tree.nodes[c].kind == "tool_result"]
        if results:
            return results[-1]
    return node_id


def files_at(store: SessionStore, ref: str) -> tuple[str | None, str]:
    """The node ``ref`` lands on and the snapshot of its files; ConfigError when no files are pinned there."""
    tree = store.tree
    requested = store.require(ref)
    node = _landing(tree, requested)
    snapshot = tree.undo.get(node) if node in tree.undo else tree.snapshot_for(requested if node is None else node)
    if snapshot is None:
        raise ConfigError(
            f"session {store.id} has no files pinned at {ref!r} (checkpoints were off, or nothing ran yet): "
            f"choose a later point ({command('tree', store.id)} lists them)"
        )
    return node, snapshot


def _next_task(tree: SessionTree, node: str | None, requested: str) -> str | None:
    """The person's message after ``node``: ``requested`` when it is one, else the one on the active path,
    else the first."""
    children = tree.children.get(node, [])
    active = {n.id for n in tree.path()} if tree.leaf is not None else set()
    order = sorted(children, key=lambda c: (c != requested, c not in active))
    for child in order:
        reading = read_node(tree.nodes[child])
        if isinstance(reading, Task) and not is_blank(reading.text):
            return reading.text
    return None


def start_point(store: SessionStore, ref: str) -> StartPoint:
    """Where ``ref`` of ``store``'s session puts a comparison; ConfigError for an unknown point or one without files."""
    node, snapshot = files_at(store, ref)
    context = model_context(store.tree, node) if node is not None else Context()
    return StartPoint(ref, node, context, snapshot, _next_task(store.tree, node, store.require(ref)))
