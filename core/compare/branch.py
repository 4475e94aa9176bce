"""Provides ``BranchRecorder``: the session store as one compared variant's recorder.

Every message goes to the session as the store records it, beside the person's
place in it: the leaf is put back where it was after each, on disk too, so a
crash while variants work reopens the session where the person was. The recorder
also knows which nodes are the variant's own.
"""

from __future__ import annotations

from typing import Any

from chimera.core.sessions.store import SessionStore

__all__ = ["BranchRecorder"]


class BranchRecorder:
    """The session store as one variant's recorder: it keeps every message, and knows which nodes are its own."""

    def __init__(self, store: SessionStore) -> None:
        self.store = store
        self.nodes: set[str] = set()

    def record(
        self, kind: str, message: dict[str, Any], *, parent: str | None, sync: bool = False, queued: str | None = None
    ) -> str:
        home = self.store.tree.leaf
        node = self.store.record(kind, message, parent=parent, sync=sync, queued=queued)
        self.nodes.add(node)
        self._stay(home, sync=sync)
        return node

    def record_compaction(self, message: dict[str, Any], *, parent: str | None, keep: str | None) -> str:
        home = self.store.tree.leaf
        node = self.store.record_compaction(message, parent=parent, keep=keep)
        self.nodes.add(node)
        self._stay(home, sync=True)
        return node

    def _stay(self, home: str | None, *, sync: bool) -> None:
        """The leaf back at ``home``, the person's place, after a message of the variant moved it."""
        if self.store.tree.leaf != home:
            self.store.move_leaf(home, sync=sync)

    def unqueue(self, queue_id: str) -> None:
        self.store.unqueue(queue_id)

    def record_result(self, parent_id: str, block: dict[str, Any]) -> None:
        self.store.record_result(parent_id, block)

    def children_of(self, node_id: str | None) -> int:
        return self.store.children_of(node_id)
