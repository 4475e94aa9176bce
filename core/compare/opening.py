"""Provides ``open_comparison``: a stored session opened for a comparison, as ``chimera compare`` opens it;
and ``session_comparison``: one inside a live ``Session`` (the workbench's).

The session is opened for writing under its lock, so one open in another
Chimera is refused with the usual words; the workspace's lock is held shared,
as a run holds it (a switch in that folder waits; the comparison itself never
writes there). The variants' permissions are the session's (the mode and rules
its runs were last started with), with the mode and the rules ``chimera compare``
was given (``--permission-mode``, ``--allow``, ``--deny``, as ``chimera run``
takes them: the options a refused call's words name) in their place and beside
them.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

from chimera.core.compare.runner import Comparison, check_verify
from chimera.core.compare.spec import VariantSpec
from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home
from chimera.core.mcp.sources import configured_servers
from chimera.core.permissions.policy import MODES, PermissionPolicy
from chimera.core.permissions.rule import Rule
from chimera.core.providers.base import Provider
from chimera.core.providers.factory import create_provider
from chimera.core.sandbox.choice import choose_sandbox
from chimera.core.sandbox.policy import SandboxSettings
from chimera.core.sessions.session import Session
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import interrupted_switch
from chimera.core.sessions.workspace_lock import WorkspaceLock
from chimera.core.settings import load_settings
from chimera.core.tool_group import DEFAULT_TOOLS

__all__ = ["open_comparison", "session_comparison", "session_policy"]


def session_policy(
    store: SessionStore,
    home: Path,
    *,
    mode: str | None = None,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    sandbox: SandboxSettings | None = None,
) -> PermissionPolicy:
    """The permissions the session's runs were last started with (``ask`` and no rules when it never said),
    with ``mode`` in place of its mode and ``allow`` and ``deny`` beside its rules (``--permission-mode``,
    ``--allow``, ``--deny``), its commands confined by ``sandbox``. ConfigError naming the option for an unknown
    mode or a bad rule."""
    _check_permissions(mode, allow, deny)
    recorded = store.meta.get("permissions")
    if not isinstance(recorded, dict):
        recorded = {}
    return PermissionPolicy.build(
        mode if mode is not None else str(recorded.get("mode", "ask")),
        allow=[*(str(rule) for rule in recorded.get("allow", [])), *allow],
        deny=[*(str(rule) for rule in recorded.get("deny", [])), *deny],
        tools=DEFAULT_TOOLS.names,
        home=home,
        sandbox=sandbox,
    )


def _check_permissions(mode: str | None, allow: Sequence[str], deny: Sequence[str]) -> None:
    """ConfigError naming the option, as ``chimera run`` words it, for an unknown mode or a bad rule."""
    if mode is not None and mode not in MODES:
        raise ConfigError(f"--permission-mode {mode!r} is unknown: use one of {', '.join(MODES)}")
    for flag, rules in (("--allow", allow), ("--deny", deny)):
        for rule in rules:
            try:
                Rule.parse(rule, DEFAULT_TOOLS.names)
            except ConfigError as err:
                raise ConfigError(f"{flag}: {err}") from None


@contextlib.contextmanager
def open_comparison(
    session_id: str,
    ref: str,
    specs: Sequence[VariantSpec],
    *,
    task: str | None = None,
    verify: str | None = None,
    jobs: int | None = None,
    permission_mode: str | None = None,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    sandbox: str | None = None,
    allow_network: bool = False,
    sandbox_auto: bool = False,
    provider_for: Callable[[str | None], Provider] = create_provider,
    mcp_config: Path | None = None,
) -> Iterator[Comparison]:
    """A ``Comparison`` over stored session ``session_id`` from ``ref``, its calls judged by the session's
    permissions with ``permission_mode``, ``allow`` and ``deny`` (see :func:`session_policy`); the session and
    the workspace's lock are let go when the block ends. ConfigError for a session open elsewhere, cut short
    mid-switch, or a bad point, mode, rule or ``verify``. The variants' commands are confined to their own
    copies by ``sandbox`` (``--sandbox``, ``--allow-network`` over config.toml: ``choose_sandbox``); where the
    machine cannot, the store's warnings say so.
    """
    _check_permissions(permission_mode, allow, deny)  # before anything opens
    check_verify(verify)
    home = chimera_home()
    settings = load_settings(home)
    confinement, note = choose_sandbox(sandbox, allow_network, settings, home, auto=sandbox_auto)
    servers = configured_servers(settings.mcp_servers, mcp_config)
    with SessionStore.open(home, session_id) as store:
        if note:
            store.warnings.append(note)
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
                policy=session_policy(store, home, mode=permission_mode, allow=allow, deny=deny, sandbox=confinement),
                provider_for=provider_for,
                mcp_servers=servers,
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
        mcp_servers=[c.config for c in session.mcp.connections] if session.mcp is not None else (),
    )
