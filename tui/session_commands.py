"""Provides the session commands of ``chimera``: ``sessions``, ``tree``, ``switch`` and ``export``.

Each prints for a person by default and, with ``--json``, one JSON document
for scripts (the shapes DESIGN §6 fixes).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, TextIO

from chimera.core.checkpoints import ShadowRepo
from chimera.core.errors import ConfigError
from chimera.core.export import export_markdown
from chimera.core.home import chimera_home
from chimera.core.session_store import CHECKPOINTS, SessionStore, list_sessions
from chimera.core.session_tree import SessionTree
from chimera.core.switching import SwitchPlan, plan_switch, switch

__all__ = ["export_session", "label_checkpoint", "print_sessions", "print_tree", "switch_session", "tree_document"]


def print_sessions(out: TextIO, *, as_json: bool) -> int:
    sessions = list_sessions(chimera_home())
    if as_json:
        out.write(json.dumps([s.to_dict() for s in sessions], ensure_ascii=False) + "\n")
        return 0
    if not sessions:
        out.write("No sessions yet: `chimera` or `chimera run TASK` starts one.\n")
        return 0
    for info in sessions:
        when = dt.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        out.write(f"{info.id}  {when}  {info.entries:>5} entries  {info.title}\n            {info.workdir}\n")
    return 0


def tree_document(store: SessionStore) -> dict[str, Any]:
    """``{"session_id", "leaf", "nodes": [{"id", "parent_id", "kind", "summary", "label", "checkpoint"}]}``."""
    tree = store.tree
    return {
        "session_id": store.id,
        "leaf": tree.leaf,
        "nodes": [
            {
                "id": node.id,
                "parent_id": node.parent_id,
                "kind": node.kind,
                "summary": node.summary,
                "label": tree.labels.get(node.id),
                "checkpoint": tree.snapshots.get(node.id),
            }
            for node in tree.nodes.values()
        ],
    }


def print_tree(session_id: str, out: TextIO, *, as_json: bool) -> int:
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        if as_json:
            out.write(json.dumps(tree_document(store), ensure_ascii=False) + "\n")
            return 0
        out.write(f"session {store.id}  ({len(store.tree)} nodes; ● marks the active path, ◆ the leaf)\n")
        for line in _lines(store.tree):
            out.write(line + "\n")
    return 0


def _lines(tree: SessionTree) -> list[str]:
    """The tree, one node a line; indentation grows only where the conversation branches."""
    active = {node.id for node in tree.path()} if tree.leaf else set()
    lines: list[str] = []
    stack: list[tuple[str, int]] = [(child, 0) for child in reversed(tree.children.get(None, []))]
    while stack:
        node_id, depth = stack.pop()
        node = tree.nodes[node_id]
        mark = "◆" if node_id == tree.leaf else "●" if node_id in active else "○"
        label = f"  [{tree.labels[node_id]}]" if node_id in tree.labels else ""
        lines.append(f"{'  ' * depth}{mark} {node_id}  {node.kind:<11} {node.summary}{label}")
        children = tree.children.get(node_id, [])
        step = 1 if len(children) > 1 else 0
        stack.extend((child, depth + step) for child in reversed(children))
    return lines


def export_session(session_id: str, target: Path | None, out: TextIO) -> int:
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        document = export_markdown(store)
    if target is None:
        out.write(document)
        return 0
    try:
        target.write_text(document, encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot write {target}: {err.strerror or err}") from None
    return 0


def switch_session(session_id: str, node_id: str, out: TextIO, *, yes: bool, ask: bool) -> int:
    """Move the session to ``node_id`` and restore its files; show the preview first.

    Without ``yes`` the person confirms at the terminal (``ask``); with no terminal,
    a switch that rewrites files needs ``--yes``.
    """
    with SessionStore.open(chimera_home(), session_id) as store:
        if not store.workdir.is_dir():
            raise ConfigError(f"the workspace {store.workdir} of session {store.id} is no longer there")
        repo = ShadowRepo(store.workdir, store.folder / CHECKPOINTS)
        plan = plan_switch(store, repo, node_id)
        node = store.tree.nodes[plan.node]
        out.write(f"Switch session {store.id} to {plan.node} ({node.kind}: {node.summary})\n")
        _print_preview(plan, out)
        count = len(plan.preview.changed) if plan.preview is not None else 0
        if count and not yes:
            if not ask:
                raise ConfigError(
                    f"this switch rewrites {count} path{'s' if count != 1 else ''}: pass --yes to confirm"
                )
            out.write("Go ahead? [y/N] ")
            out.flush()
            if input().strip().lower() not in {"y", "yes"}:
                out.write("Nothing changed.\n")
                return 1
        before = switch(store, repo, plan)
    if before is not None:
        out.write(f"Switched. The files as they were are snapshot {before[:12]}; switch back to {plan.leaf} to undo.\n")
    else:
        out.write("Switched.\n")
    return 0


def _print_preview(plan: SwitchPlan, out: TextIO) -> None:
    preview = plan.preview
    if preview is None:
        out.write("  No snapshot pins this point: the files stay as they are.\n")
        return
    rows = [
        ("rewrite", preview.rewrite, ""),
        ("create", preview.create, ""),
        ("delete", preview.delete, "  (the agent made it after this point)"),
        ("keep", preview.keep, "  (no snapshot saw it: yours, never deleted)"),
        ("skip", preview.skip, "  (held by something no snapshot holds)"),
    ]
    for verb, paths, note in rows:
        for path in paths:
            out.write(f"  {verb:<8}{path}{note}\n")
    if not preview.changed:
        out.write("  The files already match.\n")
    if plan.unsaved:
        shown = ", ".join(plan.unsaved[:8]) + (" …" if len(plan.unsaved) > 8 else "")
        out.write(f"  Changed since the last snapshot (kept in the pre-switch snapshot): {shown}\n")


def label_checkpoint(session_id: str, label: str, node_ref: str | None, out: TextIO) -> int:
    """Name a node (the leaf by default); at the leaf, pin the workspace as it is now."""
    with SessionStore.open(chimera_home(), session_id) as store:
        node_id = store.require(node_ref) if node_ref else store.tree.leaf
        if node_id is None:
            raise ConfigError(f"session {store.id} has no messages yet: there is nothing to name")
        snapshot = store.tree.snapshot_for(node_id)
        if node_id == store.tree.leaf and store.workdir.is_dir():
            snapshot = ShadowRepo(store.workdir, store.folder / CHECKPOINTS).snapshot(label)
            store.pin(node_id, snapshot)
        store.label(node_id, label)
    pinned = f", files pinned as snapshot {snapshot[:12]}" if snapshot else ", no files pinned"
    out.write(f"Checkpoint {label!r} at {node_id}{pinned}. `chimera switch {session_id} {label}` comes back to it.\n")
    return 0
