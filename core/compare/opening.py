"""Provides ``open_comparison``: a stored session opened for a comparison, as ``chimera compare`` opens it;
and ``session_comparison``: one inside a live ``Session`` (the workbench's).

The session is opened for writing under its lock, so one open in another
Chimera is refused with the usual words; the workspace's lock is held shared,
as a run holds it (a switch in that folder waits; the comparison itself never
writes there). The variants' permissions are the session's: the mode and rules
its runs were last started with.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from chimera.core.compare.runner import Comparison
from chimera.core.compare.spec import VariantSpec
from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home
from chimera.core.permissions.policy import PermissionPolicy
from chimera.core.providers.base import Provider
from chimera.core.providers.factory import create_provider
from chimera.core.sessions.session import Session
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import interrupted_switch
from chimera.core.sessions.workspace_lock import WorkspaceLock
from chimera.core.tool_group import DEFAULT_TOOLS

__all__ = ["open_comparison", "session_comparison", "session_policy"]


def session_policy(store: SessionStore, home: Path) -> PermissionPolicy:
    """The permissions the session's runs were last started with (``ask`` and no rules when it never said)."""
    recorded = store.meta.get("permissions")
    if not isinstance(recorded, dict):
        return PermissionPolicy.build("ask", tools=DEFAULT_TOOLS.names, home=home)
    return PermissionPolicy.build(
        str(recorded.get("mode", "ask")),
        allow=[str(rule) for rule in recorded.get("allow", [])],
        deny=[str(rule) for rule in recorded.get("deny", [])],
        tools=DEFAULT_TOOLS.names,
        home=home,
    )


@contextlib.contextmanager
def open_comparison(
    session_id: str,
    ref: str,
    specs: Sequence[VariantSpec],
    *,
    task: str | None = None,
    verify: str | None = None,
    jobs: int | None = None,
    provider_for: Callable[[str | None], Provider] = create_provider,
) -> Iterator[Comparison]:
    """A ``Comparison`` over stored session ``session_id`` from ``ref``; the session and the workspace's lock
    are let go when the block ends. ConfigError for a session open elsewhere, cut short mid-switch, or a bad point.
    """
    home = chimera_home()
    with SessionStore.open(home, session_id) as store:
        if store.tree.pending_switch is not None:
            raise ConfigError(interrupted_switch(store))
        with WorkspaceLock(home, store.workdir) as lock:
            lock.shared()
            yield Comparison(
                store,
                ref,
                specs,
                task=task,
                verify=verify,
                jobs=jobs,
                policy=session_policy(store, home),
                provider_for=provider_for,
            )


def session_comparison(
    session: Session,
    ref: str,
    specs: Sequence[VariantSpec],
    *,
    task: str | None = None,
    verify: str | None = None,
    jobs: int | None = None,
) -> Comparison:
    """A ``Comparison`` in live ``session`` from ``ref``: its store, its permissions (questions are asked, through
    ``variant.answer``, when the session asks them). Between runs only; ConfigError otherwise, or in the demo."""
    if session.demo:
        raise ConfigError("the demo plays a recording: set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL) to compare")
    if session.agent.running:
        raise ConfigError("a run is going: interrupt it or let it finish before comparing")
    return Comparison(
        session.store,
        ref,
        specs,
        task=task,
        verify=verify,
        jobs=jobs,
        policy=session.policy,
        can_ask=session.agent.can_ask,
    )
