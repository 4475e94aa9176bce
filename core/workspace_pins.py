"""Provides ``WorkspacePins``: the session's nodes pinned to snapshots of the workspace.

The loop asks for a pin at every user turn, and before and after each batch
of tool calls that can change files. A pin is a snapshot in the session's
shadow repository, recorded against the node, so switching to any node can
bring the files back. A snapshot that fails never stops the run: the node is
left unpinned and the failure is reported once. When the session closes, a
snapshot store grown past ``PACK_ABOVE`` is packed (git's delta compression)
with only the pinned snapshots kept, so disk use stays bounded.
"""

from __future__ import annotations

import asyncio
import logging

from chimera.core.checkpoints import ShadowRepo
from chimera.core.errors import ChimeraError
from chimera.core.session_store import SessionStore

__all__ = ["WorkspacePins"]

log = logging.getLogger("chimera.checkpoints")

PACK_ABOVE = 64 * 1024 * 1024  # loose snapshot objects past this are packed when the session closes


class WorkspacePins:
    """Snapshots the workspace into ``repo`` and records each against a node of ``store``."""

    def __init__(self, repo: ShadowRepo, store: SessionStore) -> None:
        self.repo = repo
        self.store = store
        self.failure: str | None = None

    async def pin(self, node_id: str) -> str | None:
        """Snapshot the workspace as it is now and pin it to ``node_id``; None when that failed."""
        try:
            commit = await asyncio.to_thread(self.repo.snapshot)
        except (ChimeraError, OSError) as err:
            if self.failure is None:
                self.failure = str(err)
                log.warning("workspace snapshots stopped working: %s", err)
            return None
        self.store.pin(node_id, commit)
        return commit

    async def tidy(self) -> None:
        """Keep disk use bounded: past ``PACK_ABOVE``, pack the snapshots the session pins, drop the rest."""
        try:
            if await asyncio.to_thread(self.repo.disk_bytes) > PACK_ABOVE:
                keep = set(self.store.tree.snapshots.values())
                await asyncio.to_thread(self.repo.prune, keep)
        except (ChimeraError, OSError) as err:
            log.warning("could not pack the workspace snapshots: %s", err)
