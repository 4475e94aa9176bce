"""Provides switching a session to another point: the leaf moves and the files follow.

Where a switch lands, by the kind of node named:

* a ``user`` message: just *before* it (its parent becomes the leaf), with the files
  as they were when it was sent, so the next task branches beside it;
* an ``assistant`` message that called tools: just after those calls, with their
  results and the files they left (when the calls never finished, at the message,
  with the files from before them; the calls are then answered as not run);
* anything else: that node.

The files restored are the ones the person last left there (an *undo* snapshot,
when they switched away from it or named it as a checkpoint there), else the
snapshot pinned to it or to its nearest ancestor. Only the agent's own creations
are ever deleted: paths that Chimera's ``write`` created, and only while they hold a
content its ``write``/``edit`` calls left there, and the folders ``write`` made once
nothing is left in them; a file that merely appeared while a command ran may be the
person's, and is kept, as is every folder the agent did not make. Before any file changes the present is
snapshotted and a ``switching`` record is synced, so a crash midway is detected on
the next open, and switching back restores the present exactly.

A switch cut short is never finished, it is undone: while one is pending, any switch
first saves the files as they are now (half restored, and perhaps worked on since)
under a name of their own, ``half-restored-N``, then puts back the files from before
it (its undo snapshot, deleting only what the agent made or what the cut-short switch
itself wrote) and lands where it started. ``chimera switch ID half-restored-N`` brings
the saved files back. Nothing snapshots the half-restored files as a point's files: no
undo, no checkpoint, no pin.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from chimera.core.errors import ConfigError
from chimera.core.events import Switched
from chimera.core.sessions.checkpoints import CheckpointError, Preview, ShadowRepo
from chimera.core.sessions.checkpoints.restore import Version
from chimera.core.sessions.reading import Carried, read_node
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import PendingSwitch, SavedFiles, SessionTree
from chimera.core.tools.paths import shown_name
from chimera.core.wording import command, point_name

__all__ = [
    "Named",
    "SwitchDone",
    "SwitchPlan",
    "interrupted_switch",
    "name_checkpoint",
    "plan_switch",
    "switch",
    "switch_to",
]


@dataclass(frozen=True, slots=True)
class SwitchPlan:
    """What switching to ``requested`` does.

    ``node`` is the leaf afterwards (None: before the first message). ``preview`` is
    None when no snapshot covers that point (the files stay as they are). ``unsaved``
    lists paths changed since the leaf's snapshot: kept in the pre-switch snapshot.
    ``made`` lists the paths Chimera's ``write`` created (deleted only while they hold
    what its tools left); ``appeared`` the paths that appeared while a command ran: they
    may be the person's, so they are never deleted. ``interrupted``, when set, is the
    switch that was cut short: this plan undoes it instead of going to ``requested``.
    """

    requested: str
    node: str | None
    leaf: str | None
    target: str | None
    preview: Preview | None
    unsaved: tuple[str, ...]
    known: frozenset[Version]
    note: str = ""
    made: frozenset[str] = frozenset()
    appeared: frozenset[str] = frozenset()
    interrupted: PendingSwitch | None = None
    saves: str | None = None
    saved: str | None = None
    folders: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Named:
    """A checkpoint just named: its node, the snapshot it brings back (None: no files pinned),
    the node the name was on before (``moved_from``) and the node's other names (``also``), which it keeps."""

    node: str
    snapshot: str | None
    moved_from: str | None = None
    also: tuple[str, ...] = ()


def interrupted_switch(store: SessionStore) -> str:
    """One line for a session whose switch was cut short: what state the files are in and what to run."""
    return (
        f"session {store.id} stopped in the middle of a switch, so its files may be half restored: "
        f"{_undo_advice(store)}"
    )


def _undo_advice(store: SessionStore) -> str:
    pending = store.tree.pending_switch
    assert pending is not None
    roots = store.tree.children.get(None, [])
    ref = pending.from_node or (roots[0] if roots else pending.to_node) or "NODE"
    return (
        f"{command('switch', store.id, ref, flags=('--yes',))} saves the files as they are now under a name of "
        "their own, then "
        f"puts the files back as they were before that switch, at {point_name(pending.from_node)} "
        "(it undoes the switch, it does not finish it)"
    )


SAVED_PREFIX = "half-restored-"


def _new_saved_name(tree: SessionTree) -> str:
    """``half-restored-N``: the first N that names no saved files, checkpoint or node."""
    taken = set(tree.saved) | set(tree.names) | set(tree.nodes)
    n = 1
    while f"{SAVED_PREFIX}{n}" in taken:
        n += 1
    return f"{SAVED_PREFIX}{n}"


def _landing(tree: SessionTree, requested: str) -> tuple[str | None, str]:
    node = tree.nodes[requested]
    if node.kind == "user" and isinstance(read_node(node), Carried):  # context to keep, not a task to ask again
        return requested, "with the summary of the branch left there"
    if node.kind == "user":
        return node.parent_id, "just before this message: the next task branches beside it"
    if node.kind == "assistant" and node.tool_calls:
        results = [c for c in tree.children.get(requested, []) if tree.nodes[c].kind == "tool_result"]
        if results:
            return results[-1], "after its tool calls, with their results and the files they left"
        return requested, "its tool calls never finished: files from before them; the calls count as not run"
    return requested, ""


def _files_at(tree: SessionTree, node: str | None, requested: str) -> str | None:
    if node in tree.undo:
        return tree.undo[node]
    return tree.snapshot_for(requested if node is None else node)


def plan_switch(store: SessionStore, repo: ShadowRepo, ref: str) -> SwitchPlan:
    """Look at what switching ``store`` to ``ref`` (a node id, a checkpoint label or saved files' name) would do.

    Changes no file. While a switch is pending (cut short), the plan undoes that switch instead.
    """
    tree = store.tree
    saved = tree.saved.get(ref) if tree.resolve(ref) is None else None
    requested = ref if saved is not None else store.require(ref)
    if tree.pending_switch is not None:
        return _undo_plan(store, repo, requested, tree.pending_switch, saved)
    target: str | None
    if saved is not None:
        node, note, target = saved.node, f"at {point_name(saved.node)}, with the files saved as {ref}", saved.commit
    else:
        node, note = _landing(tree, requested)
        target = _files_at(tree, node, requested)
    named = ref if saved is not None else None
    known = frozenset(tree.agent_versions())
    folders = tree.agent_folders()
    if target is None:
        return SwitchPlan(requested, node, tree.leaf, None, None, (), known, note, saved=named, folders=folders)
    made = frozenset[str]().union(*tree.made.values())
    appeared = frozenset(path for path, _ in repo.added(tree.agent_steps()) if path not in made)
    unsaved: tuple[str, ...] = ()
    current = _files_at(tree, tree.leaf, tree.leaf) if tree.leaf is not None else None
    if current is not None:
        since = repo.changes(current, known=known, folders=folders)
        unsaved = tuple(sorted((*since.changed, *since.keep)))
    preview = repo.changes(target, known=known, folders=folders)
    return SwitchPlan(
        requested, node, tree.leaf, target, preview, unsaved, known, note, made, appeared, saved=named, folders=folders
    )


def _undo_plan(
    store: SessionStore, repo: ShadowRepo, requested: str, pending: PendingSwitch, saved: SavedFiles | None
) -> SwitchPlan:
    """Save the files as they are, then put back the files from before the switch that was cut short,
    and land where it started.

    What that switch wrote (versions of its target) may be deleted, as may the agent's own files.
    """
    tree = store.tree
    known = tree.agent_versions()
    if pending.target is not None:
        known |= repo.seen([pending.target])
    present = repo.present(pending.undo)
    name = next((n for n, s in tree.saved.items() if s.commit == present), None)
    if name is not None:
        first = f"the files as they are now are saved already, as {name}"
    else:
        name = _new_saved_name(tree)
        first = f"first the files as they are now (half restored) are saved as {name}"
    note = (
        f"{first} ({command('switch', store.id, name)} brings them back); then this puts the files back as they "
        f"were before it, at {point_name(pending.from_node)} (it undoes that switch, it does not finish it)"
    )
    lands = saved.node if saved is not None else _landing(tree, requested)[0]
    if lands != pending.from_node:
        note += f"; then {command('switch', store.id, requested)} goes where you asked"
    folders = tree.agent_folders()
    preview = repo.changes(pending.undo, known=known, folders=folders)
    return SwitchPlan(
        requested,
        pending.from_node,
        tree.leaf,
        pending.undo,
        preview,
        (),
        frozenset(known),
        note,
        interrupted=pending,
        saves=name,
        folders=folders,
    )


def switch(store: SessionStore, repo: ShadowRepo, plan: SwitchPlan) -> str | None:
    """Carry out ``plan``; return the snapshot of the files as they were before (None if untouched or undone)."""
    store.sync()
    if plan.interrupted is not None:
        _undo_interrupted(store, repo, plan)
        return None
    undo: str | None = None
    target = plan.target
    if target is not None:
        try:
            undo = repo.restore(
                target,
                known=plan.known,
                folders=plan.folders,
                on_before=lambda before: store.begin_switch(plan.node, before, target),
            ).before
        except CheckpointError as err:
            if store.tree.pending_switch is None:
                raise
            raise ConfigError(f"the switch stopped half way ({err}): {_undo_advice(store)}") from None
    store.move_leaf(plan.node, undo=undo)
    return undo


def _undo_interrupted(store: SessionStore, repo: ShadowRepo, plan: SwitchPlan) -> None:
    """Save the files as they are under ``plan.saves``, then restore the undo snapshot of the switch
    that was cut short.

    The saved files are nobody's point: no undo, no checkpoint, no pin records them. Cut short
    again, it can simply be run again: the pending record still says what to undo.
    """
    assert plan.target is not None
    assert plan.saves is not None
    name = plan.saves

    def save(present: str) -> None:
        """Record the files as found, before any is touched (unless the same files are saved already)."""
        tree = store.tree
        if any(s.commit == present for s in tree.saved.values()):
            return
        store.save_files(name if name not in tree.saved else _new_saved_name(tree), present, plan.node)

    repo.remove_leftovers()
    try:
        repo.restore(plan.target, known=plan.known, folders=plan.folders, on_before=save)
    except CheckpointError as err:
        raise ConfigError(f"putting the files back stopped half way ({err}): {_undo_advice(store)}") from None
    store.move_leaf(plan.node)


@dataclass(frozen=True, slots=True)
class SwitchDone:
    """A switch that happened: its plan, and the snapshot of the files as they were before it (None: unchanged)."""

    plan: SwitchPlan
    before: str | None


def switch_to(
    store: SessionStore,
    ref: str,
    *,
    confirm: Callable[[SwitchPlan], bool],
    record: Callable[[Switched], object],
) -> SwitchDone | None:
    """Move ``store``'s session to ``ref`` (a node, a checkpoint or saved files' name) with its files.

    The caller holds the workspace's lock alone. ``confirm`` sees the plan first (a front end
    shows the preview and asks) and may say no: then nothing changes and the result is None.
    ``record`` gets the ``switched`` event (the session log, or the session's bus).
    """
    if not store.workdir.is_dir():
        raise ConfigError(f"the workspace {store.workdir} of session {store.id} is no longer there")
    repo = store.checkpoints()
    plan = plan_switch(store, repo, ref)
    if not confirm(plan):
        return None
    before = switch(store, repo, plan)
    changed = [shown_name(p) for p in plan.preview.changed] if plan.preview is not None else []
    record(
        Switched(session_id=store.id, node_id=plan.node, ts=time.time(), to_node=plan.node or "", changed_paths=changed)
    )
    return SwitchDone(plan, before)


def name_checkpoint(store: SessionStore, label: str, ref: str | None = None, *, move: bool = False) -> Named:
    """Name a node (the leaf when ``ref`` is None); at the leaf, pin the files as they are now.

    A name is on one node: one already on another node is refused, or moved here with ``move``.
    Refused too while a switch is pending (the files may be half restored).
    """
    tree = store.tree
    if not label.strip() or any(ch < " " or ch == "\x7f" for ch in label):
        raise ConfigError(f"{label!r} cannot name a checkpoint: use a name with no line breaks or control characters")
    if label in tree.nodes:
        raise ConfigError(f"{label!r} is the id of a node in session {store.id}: choose another name")
    if label in tree.saved:
        raise ConfigError(f"{label!r} names files saved in session {store.id}: choose another name")
    if tree.pending_switch is not None:
        raise ConfigError(interrupted_switch(store))
    node_id = store.require(ref) if ref else tree.leaf
    if node_id is None:
        raise ConfigError(f"session {store.id} has no messages yet: there is nothing to name")
    holder = tree.names.get(label)
    if holder is not None and holder != node_id and not move:
        raise ConfigError(
            f"session {store.id} already has a checkpoint {label!r}, at {holder}: pass --move to move the name "
            f"to {node_id}, or choose another name"
        )
    snapshot = tree.snapshot_for(node_id)
    if node_id == tree.leaf and store.workdir.is_dir():
        snapshot = store.checkpoints().snapshot(label)
        store.pin(node_id, snapshot)
    store.label(node_id, label)
    return Named(
        node_id,
        snapshot,
        moved_from=holder if holder != node_id else None,
        also=tuple(name for name in tree.labels_of(node_id) if name != label),
    )
