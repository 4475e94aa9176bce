"""Provides switching a session to another point: the leaf moves and the files follow.

Where a switch lands, by the kind of node named:

* a ``user`` message: just *before* it (its parent becomes the leaf), with the files
  as they were when it was sent, so the next task branches beside it;
* an ``assistant`` message that called tools: just after those calls, with their
  results and the files they left (when the calls never finished, at the message,
  with the files from before them; the calls are then answered as not run);
* anything else: that node.

The files restored are the ones the person last left there (an *undo* snapshot,
when they switched away from it), else the snapshot pinned to it or to its
nearest ancestor. Only the agent's own creations are ever deleted: paths that a
tool batch added (between the snapshots around it), and only while they hold a
content the agent's tool calls left there. Before any file changes the
present is snapshotted and a ``switching`` record is synced, so a crash midway
is detected on the next open, and switching back restores the present exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.checkpoints import CheckpointError, Preview, ShadowRepo
from chimera.core.checkpoints.restore import Version
from chimera.core.errors import ConfigError
from chimera.core.session_store import SessionStore
from chimera.core.session_tree import SessionTree

__all__ = ["SwitchPlan", "name_checkpoint", "plan_switch", "switch"]


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """What switching to ``requested`` does.

    ``node`` is the leaf afterwards (None: before the first message). ``preview`` is
    None when no snapshot covers that point (the files stay as they are). ``unsaved``
    lists paths changed since the leaf's snapshot: kept in the pre-switch snapshot.
    """

    requested: str
    node: str | None
    leaf: str | None
    target: str | None
    preview: Preview | None
    unsaved: tuple[str, ...]
    known: frozenset[Version]
    note: str = ""


def _landing(tree: SessionTree, requested: str) -> tuple[str | None, str]:
    node = tree.nodes[requested]
    if node.kind == "user":
        return node.parent_id, "just before this message: the next task branches beside it"
    if node.kind == "assistant" and node.tool_calls:
        results = [c for c in tree.children.get(requested, []) if tree.nodes[c].kind == "tool_result"]
        if results:
            return results[-1], "after its tool calls, with their results and the files they left"
        return requested, "its tool calls never finished: files from before them; the calls count as not run"
    return requested, ""


def _files_at(tree: SessionTree, node: str | None, requested: str) -> str | None:
    if node is not None and node in tree.undo:
        return tree.undo[node]
    return tree.snapshot_for(requested if node is None else node)


def plan_switch(store: SessionStore, repo: ShadowRepo, ref: str) -> SwitchPlan:
    """Look at what switching ``store`` to ``ref`` (a node id or a checkpoint label) would do; change nothing."""
    tree = store.tree
    requested = store.require(ref)
    node, note = _landing(tree, requested)
    target = _files_at(tree, node, requested)
    known = frozenset(repo.added(tree.agent_steps()))
    if target is None:
        return SwitchPlan(requested, node, tree.leaf, None, None, (), known, note)
    unsaved: tuple[str, ...] = ()
    current = _files_at(tree, tree.leaf, tree.leaf) if tree.leaf is not None else None
    if current is not None:
        since = repo.changes(current, known=known)
        unsaved = tuple(sorted((*since.changed, *since.keep)))
    return SwitchPlan(requested, node, tree.leaf, target, repo.changes(target, known=known), unsaved, known, note)


def switch(store: SessionStore, repo: ShadowRepo, plan: SwitchPlan) -> str | None:
    """Carry out ``plan``; return the snapshot of the files as they were before (None if untouched)."""
    store.sync()
    undo: str | None = None
    if plan.target is not None:
        try:
            undo = repo.restore(
                plan.target, known=plan.known, on_before=lambda before: store.begin_switch(plan.node, before)
            ).before
        except CheckpointError as err:
            pending = store.tree.pending_switch
            if pending is None:
                raise
            raise ConfigError(
                f"the switch stopped half way ({err}); `chimera switch {store.id} {pending.from_node or plan.requested}"
                f" --yes` puts the files back as they were"
            ) from None
    store.move_leaf(plan.node, undo=undo)
    return undo


def name_checkpoint(store: SessionStore, label: str, ref: str | None = None) -> tuple[str, str | None]:
    """Name a node (the leaf when ``ref`` is None); at the leaf, pin the files as they are now.

    Returns the node and the snapshot that the name brings back (None: no files pinned).
    """
    node_id = store.require(ref) if ref else store.tree.leaf
    if node_id is None:
        raise ConfigError(f"session {store.id} has no messages yet: there is nothing to name")
    snapshot = store.tree.snapshot_for(node_id)
    if node_id == store.tree.leaf and store.workdir.is_dir():
        snapshot = store.checkpoints().snapshot(label)
        store.pin(node_id, snapshot)
    store.label(node_id, label)
    return node_id, snapshot
