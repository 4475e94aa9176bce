"""Provides ``WorkspacePins``: the session's nodes pinned to snapshots of the workspace.

The loop asks for a pin at every user turn, and before and after each batch
of tool calls that can change files. A pin is a snapshot in the session's
shadow repository, recorded against the node, so switching to any node can
bring the files back. The pin after a batch also records which paths Chimera's
own ``write`` and ``edit`` wrote (and which ``write`` created), with the content
they left, and the folders ``write`` made: those are the only files and folders a
switch may count as the agent's. A
snapshot that fails never stops the run: the node is left unpinned and the
failure is reported once. A git that timed out is not asked again: snapshots stop
for the session, so a workspace git cannot read (a `.gitignore` that is a named
pipe) costs one timeout, not one a tool call. When the session closes, a snapshot store grown past
``PACK_ABOVE`` is packed (git's delta compression), keeping every snapshot the
session refers to (pins, undo snapshots, a pending switch's), so disk use stays
bounded and no switch loses its way back.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence

from chimera.core.errors import ChimeraError
from chimera.core.sessions.checkpoints import CheckpointTimeout, ShadowRepo
from chimera.core.sessions.store import SessionStore

__all__ = ["WorkspacePins"]

log = logging.getLogger("chimera.checkpoints")

PACK_ABOVE = 64 * 1024 * 1024  # loose snapshot objects past this are packed when the session closes


class WorkspacePins:
    """Snapshots the workspace into ``repo`` and records each against a node of ``store``."""

    def __init__(self, repo: ShadowRepo, store: SessionStore) -> None:
        self.repo = repo
        self.store = store
        self.failure: str | None = None
        self.gave_up = False  # after a timeout: no more snapshots this session

    async def pin(
        self, node_id: str, wrote: Mapping[str, bool] | None = None, *, folders: Sequence[str] = ()
    ) -> str | None:
        """Snapshot the workspace as it is now and pin it to ``node_id``; None when that failed.

        ``wrote``: the paths Chimera's ``write``/``edit`` wrote in the batch just done, each
        True when ``write`` created it; recorded with the content each holds in the snapshot.
        ``folders``: the folders ``write`` made in that batch, recorded as the agent's.
        """
        if self.gave_up:
            return None
        try:
            commit = await asyncio.to_thread(self.repo.snapshot)
        except (ChimeraError, OSError) as err:
            self.gave_up = isinstance(err, CheckpointTimeout)
            if self.failure is None:
                self.failure = str(err)
                log.warning("workspace snapshots stopped working: %s", err)
            return None
        blobs: dict[str, str] = {}
        if wrote:
            try:
                blobs = await asyncio.to_thread(self.repo.blobs, commit, wrote)
            except (ChimeraError, OSError) as err:  # recorded without: nothing counts as the agent's
                log.warning("could not note which files the tools wrote: %s", err)
        made = [path for path, created in (wrote or {}).items() if created and path in blobs]
        self.store.pin(node_id, commit, wrote=blobs, made=made, folders=folders)
        return commit

    async def tidy(self) -> None:
        """Keep disk use bounded: past ``PACK_ABOVE``, pack every snapshot the session refers to, drop the rest."""
        try:
            if await asyncio.to_thread(self.repo.disk_bytes) > PACK_ABOVE:
                keep = self.store.tree.referenced()
                await asyncio.to_thread(self.repo.prune, keep)
        except (ChimeraError, OSError) as err:
            log.warning("could not pack the workspace snapshots: %s", err)
