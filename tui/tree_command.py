"""Provides ``chimera tree``: a session's nodes for a person, one a line, or as one JSON document.

What a session holds is untrusted: printed for a person each line shows what
could steer a terminal as an escape; in JSON the values stay exact. Only what
this command needs is imported, so a large tree costs its reading, not the
CLI's other commands.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO

from rich.cells import cell_len, set_cell_size

from chimera.core.gc_pause import collecting_later
from chimera.core.home import chimera_home
from chimera.core.sessions.reading import Reader, left_out_of, summary
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.tree import SessionTree
from chimera.core.sessions.tree_lines import TreeLines
from chimera.core.terminal_text import inert_json, terminal_safe
from chimera.core.wording import command, plural, point_name
from chimera.tui.printing import line, warn_opened

__all__ = ["print_tree", "tree_document"]


def tree_document(store: SessionStore) -> dict[str, Any]:
    """``{"session_id", "leaf", "nodes": [{"id", "parent_id", "kind", "part", "summary", "label", "checkpoint",
    "restores", "left_out"}], "saved": [{"name", "node", "snapshot"}]}``.

    ``part`` is what the node is (``sessions.reading``: prompt, steering, note, continuation, answer, results,
    compaction, damaged); ``left_out`` why it is kept but no longer sent to the model (``refused``, ``declined``,
    ``interrupted``), or null; ``checkpoint`` is a snapshot pinned to the node itself; ``restores`` the one a switch
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
        snapshot = tree.snapshots.get(node.id)
        restores[node.id] = snapshot or restores.get(node.parent_id)
        names = labelled.get(node.id) or []
        reading = reader.read(node.id)
        yield {
            "id": node.id,
            "parent_id": node.parent_id,
            "kind": node.kind,
            "part": reading.part,
            "summary": summary(reading),
            "label": names[-1] if names else None,
            "labels": names,
            "checkpoint": snapshot,
            "restores": restores[node.id],
            "left_out": left_out_of(reading) or None,
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
        width = output_width(out)
        head = f"session {store.id}  ({plural(len(store.tree), 'node')}; • marks the active path, ◆ the leaf)"
        line(out, cut(terminal_safe(head, one_line=True), width) if width else head)
        tree_lines = TreeLines(store.tree)
        if tree_lines.notice:
            line(sys.stderr, f"chimera: session {store.id}: {tree_lines.notice}")
        for text in _lines(tree_lines, width):
            line(out, text)
        for name, saved in store.tree.saved.items():
            switch = command("switch", store.id, name)
            line(out, f"saved files {name} (at {point_name(saved.node)}): {switch} brings them back")
    return 0


def _lines(lines: TreeLines, width: int | None) -> list[str]:
    """The tree as ``TreeLines`` lays it out, one line a node that matters, shown safe (what could steer a
    terminal as an escape) and cut (never wrapped) at ``width`` columns (None: as long as it is)."""
    out = [terminal_safe(lines.plain(line), one_line=True) for line in lines.lines]
    return [cut(text, width) for text in out] if width else out


def output_width(out: TextIO) -> int | None:
    """The columns to cut lines at: ``COLUMNS`` when set, else the terminal's when ``out`` is one, else None."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    try:
        return os.get_terminal_size(out.fileno()).columns if out.isatty() else None
    except (OSError, ValueError, AttributeError):
        return None


def cut(text: str, width: int) -> str:
    """``text`` cut to ``width`` cells (an ellipsis ends what was cut)."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, max(0, width - 1)) + "…"
