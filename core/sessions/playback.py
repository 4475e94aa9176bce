"""Provides ``play_back``: a stored session's branch replayed onto a bus, and ``report_lines``, what to say after.

Headless ``chimera replay`` prints the events it publishes; the workbench shows
them through its transcript. Both open the session read-only, play in a
scratch folder that is gone afterwards, mask the process's credentials, and
say the same words about how it ended.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from pathlib import Path

from chimera.core import credentials
from chimera.core.bus import EventBus
from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home
from chimera.core.providers.pace import Pace
from chimera.core.sessions.history import read_log
from chimera.core.sessions.replay import ReplayReport, replay_session
from chimera.core.sessions.store import SessionStore
from chimera.core.wording import plural

__all__ = ["check_replayable", "play_back", "report_lines"]


async def play_back(
    session_id: str,
    bus: EventBus,
    *,
    node: str | None = None,
    rerun_tools: bool = False,
    clock: Pace | None = None,
    warn: Callable[[str], None] = lambda line: None,
) -> ReplayReport:
    """Replay the branch of session ``session_id`` that ends at ``node`` (the leaf when None) onto ``bus``; every
    event carries the session's whole id (``replay_session``).

    ``warn`` hears what opening the session found damaged (the replay goes on without it).
    Raises ConfigError for an unknown session or node, or a branch with nothing to replay.
    """
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        for warning in store.warnings:
            warn(f"session {store.id}: {warning}")
        node_id = _branch_end(store, node)
        with tempfile.TemporaryDirectory(prefix="chimera-replay-") as scratch:
            workspace = Path(scratch) / "workspace"
            workspace.mkdir()
            return await replay_session(
                store.tree,
                node_id=node_id,
                workspace=workspace,
                original_workspace=store.workdir,
                spill_dir=Path(scratch) / "output",
                bus=bus,
                rerun_tools=rerun_tools,
                repo=store.checkpoints() if rerun_tools else None,
                model=str(store.meta.get("model", "replay")),
                secrets=credentials.values(),
                clock=clock,
                logged=read_log(store),
                session_id=store.id,  # the events say which session they play
            )


def check_replayable(session_id: str, node: str | None = None) -> None:
    """Raise ConfigError, as :func:`play_back` would, when there is no such session or node, or nothing to play."""
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        _branch_end(store, node)


def _branch_end(store: SessionStore, node: str | None) -> str | None:
    node_id = store.require(node) if node is not None else None
    if not store.tree.path(node_id):
        raise ConfigError(f"session {store.id} has no messages to replay")
    return node_id


def report_lines(report: ReplayReport, *, rerun_tools: bool) -> list[str]:
    """What to tell the person after a replay, one line each: the notes first, how it ended last."""
    outside = "leads outside the workspace, so the scratch copy leaves it out"
    lines = [f"the link {path} {outside}" for path in report.left_out]
    lines += [f"not re-run, recorded result kept: {line}" for line in report.not_rerun]
    if not report.success:
        return [*lines, f"replay stopped ({report.reason}) in run {report.runs}: {report.error}"]
    done = plural(report.runs, "run")
    if rerun_tools:
        done += f", {report.checked} tool results matched, {len(report.not_rerun)} kept as recorded"
    if report.stops_at is not None:
        done += f"; it ends at node {report.stops_at}, where the recording of this branch stops before an answer"
    return [*lines, f"replay completed: {done}"]
