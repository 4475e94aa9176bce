"""Provides ``BranchRecorder``: the session store as one compared variant's recorder.

Every message goes to the session as the store records it, beside the person's
place in it: each node is recorded ``aside``, so the leaf stays where the person
left it in that same record, on disk too. No moment (a SIGKILL between two
writes) has the session's leaf on a variant's branch, and nothing has to put it
back. The recorder also knows which nodes are the variant's own.
"""

from __future__ import annotations

from collections.abc import Sequence
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
        node = self.store.record(kind, message, parent=parent, sync=sync, queued=queued, aside=True)
        self.nodes.add(node)
        return node

    def record_compaction(self, message: dict[str, Any], *, parent: str | None, keep: str | None) -> str:
        node = self.store.record_compaction(message, parent=parent, keep=keep, aside=True)
        self.nodes.add(node)
        return node

    def unqueue(self, queue_id: str) -> None:
        self.store.unqueue(queue_id)

    def record_result(self, parent_id: str, block: dict[str, Any]) -> None:
        self.store.record_result(parent_id, block)

    def children_of(self, node_id: str | None) -> int:
        return self.store.children_of(node_id)

    def leave_out(self, node_ids: Sequence[str], why: str) -> None:
        self.store.leave_out(node_ids, why)
