"""Provides ``preview_switch``: what a switch to a point would change, in numbers a person reads at a glance.

The turns and the tokens (an estimate: four characters a token) of the conversation left behind (on the
active path, past the point where the two paths part), and each file the switch would write, create or
delete with the lines it adds and removes. It asks ``plan_switch``, so it says exactly what the switch
does, and changes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from chimera.core.errors import SessionError
from chimera.core.sessions.checkpoints import CheckpointError, ShadowRepo
from chimera.core.sessions.reading import Reader, Steer, Task
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import SwitchPlan, plan_switch
from chimera.core.sessions.tree import SessionTree
from chimera.core.tools.paths import shown_name

__all__ = ["FileChange", "SwitchPreview", "left_behind", "preview_switch"]

_CHARS_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class FileChange:
    """One path a switch changes: ``verb`` (rewrite, create, delete), the lines added and removed."""

    path: str
    verb: str
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class SwitchPreview:
    """What a switch to ``requested`` does: where it lands, what it leaves behind, which files it changes.

    ``pinned`` is False when no snapshot covers the point (the files stay as they are); ``kept`` counts the
    paths the switch leaves alone that are not the agent's; ``at_risk`` names the files changed since the last
    snapshot (by the person, or outside Chimera) that the switch rewrites or deletes: saved first, so a switch
    back brings them back, but gone from the workspace until then.
    """

    requested: str
    node: str | None
    note: str
    turns: int
    tokens: int
    files: tuple[FileChange, ...]
    pinned: bool
    kept: int = 0
    at_risk: tuple[str, ...] = ()

    @property
    def moves(self) -> bool:
        """Whether the switch goes anywhere (the leaf or the files change)."""
        return bool(self.files) or self.turns > 0 or self.tokens > 0


def left_behind(tree: SessionTree, node: str | None) -> tuple[int, int]:
    """The person's turns and the estimated tokens on the active path that a move to ``node`` leaves."""
    if tree.leaf is None:
        return 0, 0
    kept = {n.id for n in tree.path(node)} if node is not None else set()
    reader = Reader(tree)
    turns = chars = 0
    for current in tree.path():
        if current.id in kept:
            continue
        reading = reader.read(current.id)
        turns += isinstance(reading, Task | Steer)
        try:
            chars += len(str(current.message.get("content", "")))
        except SessionError:
            continue
    return turns, chars // _CHARS_PER_TOKEN


def preview_switch(store: SessionStore, ref: str) -> SwitchPreview:
    """What switching ``store`` to ``ref`` (a node id or a name) would do; changes nothing.

    ConfigError (unknown ``ref``) or CheckpointError (the snapshots cannot be read) when it cannot say.
    """
    repo = store.checkpoints()
    plan = plan_switch(store, repo, ref)
    turns, tokens = left_behind(store.tree, plan.node)
    return SwitchPreview(
        plan.requested,
        plan.node,
        plan.note,
        turns,
        tokens,
        _files(plan, repo),
        plan.preview is not None,
        kept=len(plan.preview.keep) if plan.preview is not None else 0,
        at_risk=_at_risk(plan),
    )


def _at_risk(plan: SwitchPlan) -> tuple[str, ...]:
    """The files edited since the last snapshot that the switch would rewrite or delete."""
    preview = plan.preview
    if preview is None:
        return ()
    touched = {*preview.rewrite, *preview.delete}
    return tuple(shown_name(path) for path in plan.unsaved if path in touched)


def _files(plan: SwitchPlan, repo: ShadowRepo) -> tuple[FileChange, ...]:
    preview = plan.preview
    if preview is None or plan.target is None:
        return ()
    try:
        counts = repo.line_counts(plan.target)
    except CheckpointError:
        counts = {}
    rows = [("rewrite", p) for p in preview.rewrite] + [("create", p) for p in preview.create]
    rows += [("delete", p) for p in preview.delete]
    return tuple(
        FileChange(shown_name(p), verb, *counts.get(p, (0, 0))) for verb, p in sorted(rows, key=lambda r: r[1])
    )
