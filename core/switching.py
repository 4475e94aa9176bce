"""Provides switching a session to another node: the leaf moves and the files follow.

``plan_switch`` says what would happen (a preview, and the person's edits no
snapshot has seen yet); ``switch`` does it: the log is synced, the present is
snapshotted and pinned to the leaf being left (so switching back undoes it,
the person's unsaved edits included), only the changed paths are rewritten,
and the new leaf is recorded.
"""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.checkpoints import Preview, ShadowRepo
from chimera.core.session_store import SessionStore

__all__ = ["SwitchPlan", "plan_switch", "switch"]


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """What switching to ``node`` does.

    ``preview`` is None when no snapshot pins the node or its ancestors (the files
    stay as they are). ``unsaved`` lists the paths the person changed since the
    leaf's snapshot: they are kept in the pre-switch snapshot, not lost.
    """

    node: str
    leaf: str | None
    target: str | None
    preview: Preview | None
    unsaved: tuple[str, ...]
    known: frozenset[str]


def plan_switch(store: SessionStore, repo: ShadowRepo, node_id: str) -> SwitchPlan:
    """Look at what switching ``store`` to ``node_id`` (an id or a checkpoint label) would do; change nothing."""
    node_id = store.require(node_id)
    tree = store.tree
    target = tree.snapshot_for(node_id)
    known = frozenset(repo.seen(tree.snapshots.values())) if tree.snapshots else frozenset()
    if target is None:
        return SwitchPlan(node_id, tree.leaf, None, None, (), known)
    current = tree.snapshot_for(tree.leaf) if tree.leaf else None
    unsaved: tuple[str, ...] = ()
    if current is not None:
        since = repo.changes(current, known=known)
        unsaved = tuple(sorted((*since.changed, *since.keep)))
    return SwitchPlan(node_id, tree.leaf, target, repo.changes(target, known=known), unsaved, known)


def switch(store: SessionStore, repo: ShadowRepo, plan: SwitchPlan) -> str | None:
    """Carry out ``plan``; return the snapshot of the files as they were before (None if untouched)."""
    store.sync()
    before: str | None = None
    if plan.target is not None:
        leaf = plan.leaf

        def keep_present(snapshot: str) -> None:
            if leaf is not None:
                store.pin(leaf, snapshot)
            store.sync()

        before = repo.restore(plan.target, known=plan.known, on_before=keep_present).before
    store.move_leaf(plan.node)
    return before
