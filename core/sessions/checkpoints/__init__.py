"""Provides workspace checkpoints: snapshots of the files in a shadow git repository, and restores.

The shadow repository lives outside the workspace (its own git dir and index;
the workspace is only its work tree), so the person's own ``.git`` is never
written: no commit, ref, index or config change ever lands there. Before git
runs, the shadow repository is checked to be its own (``places``): no link,
none inside it, no ``commondir``, not in a git directory of the workspace,
and the workspace itself in no git directory.

What a snapshot holds: every file git would add, with its exec bit, symlinks
as links, byte for byte (no filters or line-ending conversion). Left out:
files the workspace's ``.gitignore`` files, its ``.git/info/exclude`` or the
global excludes file ignore, files over ``max_file_bytes``, any ``.git``, and
nested git repositories (their files belong to that repository). A snapshot is
a parentless commit with a fixed date, so the same files and label give the
same id. Snapshotting an unchanged workspace hashes nothing: the shadow index
remembers each file's stat data.

Disk use stays bounded three ways: git stores each distinct content once (an
unchanged file costs nothing per snapshot), large and ignored files are never
stored, and :meth:`ShadowRepo.prune` drops every snapshot the caller no longer
references and packs the rest with delta compression (a file edited 200 times
costs about two copies). Nothing is dropped behind the caller's back:
automatic gc is off and ``gc.pruneExpire`` is ``never`` in the shadow
repository, since snapshots are not kept alive by refs between prunes.

Restoring never loses work: it snapshots the present first and returns that
id, so restoring it undoes the switch; it rewrites only the paths whose
content or mode differ; it deletes a file absent from the target only when the
caller's ``known`` set holds that path with the content it has now
(:meth:`ShadowRepo.added`, :meth:`ShadowRepo.seen`), so a file the person made,
recreated or edited that no such snapshot saw stays; and it never overwrites what
the present snapshot could not hold (a large, ignored or unreadable file), nor
writes through a symlink. Calls are synchronous: wrap them in
``asyncio.to_thread``.
"""

from __future__ import annotations

from chimera.core.sessions.checkpoints.git import CheckpointError, CheckpointTimeout
from chimera.core.sessions.checkpoints.restore import Preview, Restored
from chimera.core.sessions.checkpoints.shadow import ShadowRepo

__all__ = ["CheckpointError", "CheckpointTimeout", "Preview", "Restored", "ShadowRepo"]
