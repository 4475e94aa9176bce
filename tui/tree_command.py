"""Provides ``chimera tree``: a session's nodes for a person, one a line, or as one JSON document.

What a session holds is untrusted: printed for a person each line shows what
could steer a terminal as an escape; in JSON the values stay exact. Only what
this command needs is imported, so a large tree costs its reading, not the
CLI's other commands.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, TextIO

from chimera.core.gc_pause import collecting_later
from chimera.core.home import chimera_home
from chimera.core.sessions.reading import Reader, summary
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import SessionTree
from chimera.core.terminal_text import inert_json
from chimera.core.wording import command, plural, point_name
from chimera.tui.printing import line, warn_opened

__all__ = ["print_tree", "tree_document"]


def tree_document(store: SessionStore) -> dict[str, Any]:
    """``{"session_id", "leaf", "nodes": [{"id", "parent_id", "kind", "part", "summary", "label", "checkpoint",
    "restores"}], "saved": [{"name", "node", "snapshot"}]}``.

    ``part`` is what the node is (``sessions.reading``: prompt, steering, note, continuation, answer, results,
    compaction, damaged); ``checkpoint`` is a snapshot pinned to the node itself; ``restores`` the one a switch
    there brings back (its own, or its nearest ancestor's). ``saved`` lists files saved under a name of their
    own (the half-restored files an undo found), which a switch to the name brings back. Each node is read
    once, parents before children, so the document costs the size of the tree.
    """
    with collecting_later():
        return _document(store)


def _document(store: SessionStore) -> dict[str, Any]:
    return {**_head(store), "nodes": list(_nodes(store.tree)), "saved": _saved(store.tree)}


def _head(store: SessionStore) -> dict[str, Any]:
    return {"session_id": store.id, "leaf": store.tree.leaf}


def _saved(tree: SessionTree) -> list[dict[str, Any]]:
    return [{"name": name, "node": saved.node, "snapshot": saved.commit} for name, saved in tree.saved.items()]


def _nodes(tree: SessionTree) -> Iterator[dict[str, Any]]:
    reader = Reader(tree)
    labelled = tree.labelled()
    restores: dict[str | None, str | None] = {None: None}
    for node in tree.nodes.values():  # parents come before their children
        restores[node.id] = tree.snapshots.get(node.id) or restores.get(node.parent_id)
        reading = reader.read(node.id)
        yield {
            "id": node.id,
            "parent_id": node.parent_id,
            "kind": node.kind,
            "part": reading.part,
            "summary": summary(reading),
            "label": names[-1] if (names := labelled.get(node.id)) else None,
            "labels": labelled.get(node.id, []),
            "checkpoint": tree.snapshots.get(node.id),
            "restores": restores[node.id],
        }


def _write_document(store: SessionStore, out: TextIO) -> None:
    """The document of ``tree_document`` as one line, written a batch of nodes at a time.

    Each batch is encoded while its objects are fresh, which costs a third of encoding the
    whole document at the end, when its small objects lie scattered among the session's.
    """
    encode = json.JSONEncoder(ensure_ascii=False).encode
    head = encode(_head(store))
    out.write(inert_json(head[:-1]) + ', "nodes": [')
    batch: list[dict[str, Any]] = []
    first = True
    for node in _nodes(store.tree):
        batch.append(node)
        if len(batch) == _BATCH:
            out.write(("" if first else ", ") + inert_json(encode(batch)[1:-1]))
            batch.clear()
            first = False
    if batch:
        out.write(("" if first else ", ") + inert_json(encode(batch)[1:-1]))
    out.write('], "saved": ' + inert_json(encode(_saved(store.tree))) + "}\n")


_BATCH = 512


def print_tree(session_id: str, out: TextIO, *, as_json: bool) -> int:
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        warn_opened(store)
        if as_json:
            with collecting_later():
                _write_document(store, out)
            return 0
        line(out, f"session {store.id}  ({plural(len(store.tree), 'node')}; ● marks the active path, ◆ the leaf)")
        for text in _lines(store.tree):
            line(out, text)
        for name, saved in store.tree.saved.items():
            switch = command("switch", store.id, name)
            line(out, f"saved files {name} (at {point_name(saved.node)}): {switch} brings them back")
    return 0


def _lines(tree: SessionTree) -> list[str]:
    """The tree, one node a line; indentation grows only where the conversation branches."""
    active = {node.id for node in tree.path()} if tree.leaf else set()
    reader = Reader(tree)
    labelled = tree.labelled()
    lines: list[str] = []
    stack: list[tuple[str, int]] = [(child, 0) for child in reversed(tree.children.get(None, []))]
    shown: set[str] = set()
    while stack:
        node_id, depth = stack.pop()
        node = tree.nodes.get(node_id)
        if node is None or node_id in shown:  # never for a tree the store built; a walk that cannot loop
            continue
        shown.add(node_id)
        mark = "◆" if node_id == tree.leaf else "●" if node_id in active else "○"
        label = f"  [{', '.join(labelled[node_id])}]" if node_id in labelled else ""
        reading = reader.read(node_id)
        lines.append(f"{'  ' * depth}{mark} {node_id}  {reading.part:<12} {summary(reading)}{label}")
        children = tree.children.get(node_id, [])
        step = 1 if len(children) > 1 else 0
        stack.extend((child, depth + step) for child in reversed(children))
    return lines
