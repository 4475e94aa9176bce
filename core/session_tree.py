"""Provides ``SessionTree``: a session's conversation as a tree, rebuilt from its records.

Nodes are messages (``user``, ``assistant``, ``tool_result``, ``compaction``);
each has a parent, so every node is a point to branch from. The *leaf* is
where the conversation stands; the model's context is the path from the root
to the leaf. Moving the leaf is itself a record, so a reopened session lands
where the person was. Labels name nodes (named checkpoints); workspace
snapshots pin the files as they were at a node.

This module only holds and reads the tree; ``session_store`` writes it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MESSAGE_KINDS", "Node", "SessionTree"]

MESSAGE_KINDS = frozenset({"user", "assistant", "tool_result", "compaction"})


@dataclass(frozen=True, slots=True)
class Node:
    """One message in the tree."""

    id: str
    parent_id: str | None
    kind: str
    ts: float
    message: dict[str, Any]

    @property
    def summary(self) -> str:
        """One line saying what the node holds."""
        content = self.message.get("content")
        if isinstance(content, str):
            text = content
        else:
            parts = []
            for block in content or []:
                kind = block.get("type")
                if kind == "text" and not block.get("text", "").startswith("<system-reminder>"):
                    parts.append(block.get("text", ""))
                elif kind == "tool_use":
                    parts.append(f"[{block.get('name')}]")
                elif kind == "tool_result":
                    parts.append("[result]" if not block.get("is_error") else "[error]")
            text = " ".join(parts)
        line = " ".join(text.split())
        return line if len(line) <= 80 else line[:79] + "…"


@dataclass(slots=True)
class SessionTree:
    """The nodes of one session, their children, the leaf, labels and snapshots."""

    nodes: dict[str, Node] = field(default_factory=dict)
    children: dict[str | None, list[str]] = field(default_factory=dict)
    leaf: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    snapshots: dict[str, str] = field(default_factory=dict)

    def add(self, node: Node) -> None:
        self.nodes[node.id] = node
        self.children.setdefault(node.parent_id, []).append(node.id)
        self.leaf = node.id

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def __len__(self) -> int:
        return len(self.nodes)

    def path(self, node_id: str | None = None) -> list[Node]:
        """The nodes from the root to ``node_id`` (the leaf when None)."""
        out: list[Node] = []
        current = self.leaf if node_id is None else node_id
        while current is not None:
            node = self.nodes[current]
            out.append(node)
            current = node.parent_id
        out.reverse()
        return out

    def ancestors(self, node_id: str) -> Iterator[Node]:
        """``node_id`` and its ancestors, nearest first."""
        current: str | None = node_id
        while current is not None:
            node = self.nodes[current]
            yield node
            current = node.parent_id

    def snapshot_for(self, node_id: str) -> str | None:
        """The workspace snapshot that pins ``node_id``: its own, or its nearest ancestor's."""
        for node in self.ancestors(node_id):
            if node.id in self.snapshots:
                return self.snapshots[node.id]
        return None

    def messages(self, node_id: str | None = None) -> list[dict[str, Any]]:
        """The model's context at ``node_id``: the path's messages, neighbouring user turns merged."""
        out: list[dict[str, Any]] = []
        for node in self.path(node_id):
            message = node.message
            if out and out[-1]["role"] == message["role"] == "user":
                out[-1] = {"role": "user", "content": _blocks(out[-1]["content"]) + _blocks(message["content"])}
            else:
                out.append(message)
        return out

    def open_calls(self) -> list[str]:
        """Ids of the leaf's tool calls that have no result (the process stopped while they ran)."""
        if self.leaf is None:
            return []
        node = self.nodes[self.leaf]
        if node.kind != "assistant":
            return []
        return [b["id"] for b in node.message.get("content", []) if b.get("type") == "tool_use"]

    def resolve(self, ref: str) -> str | None:
        """The node ``ref`` names: a node id, or a checkpoint's label (the latest node with it)."""
        if ref in self.nodes:
            return ref
        named = [node_id for node_id, label in self.labels.items() if label == ref]
        return named[-1] if named else None

    def is_branch_point(self, node_id: str) -> bool:
        return len(self.children.get(node_id, [])) > 1


def _blocks(content: Any) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
