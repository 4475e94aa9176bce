"""Provides ``choose_sandbox``: the sandbox a session's commands run in, from the flags and config.toml, and the
one line that says so when the machine cannot hold it.

``--sandbox`` (``workspace`` or ``off``) wins over ``[sandbox] mode``; the default is
``workspace``. ``CHIMERA_SANDBOX_WRITABLE`` (paths joined by ``:``) adds writable paths to
``[sandbox] writable``, for a setup (a test harness, CI) that hands commands a channel outside
the workspace. ``--allow-network`` or ``[sandbox] network = true`` gives commands the
network. ``--sandbox-auto`` or ``[sandbox] auto = true`` lets a command that only the
permission mode would ask about run unasked, confined (the executor decides, call by
call: ``Executor._sandbox_answers``). Where ``workspace`` is asked for but this machine cannot confine commands
(``probe.py``), commands run as before, guarded by the permission rules alone, and the
line returned says so: Chimera prints it once at start, never falls back silently.
"""

from __future__ import annotations

import os
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.sandbox import MODES, tempdirs
from chimera.core.sandbox.policy import SandboxSettings
from chimera.core.sandbox.probe import support
from chimera.core.settings import Settings

__all__ = ["WRITABLE_ENV", "check_mode", "choose_sandbox", "in_words"]

WRITABLE_ENV = "CHIMERA_SANDBOX_WRITABLE"


def check_mode(mode: str | None) -> None:
    """ConfigError in one line for a ``--sandbox`` value that is not a mode."""
    if mode is not None and mode not in MODES:
        raise ConfigError(f"--sandbox {mode!r} is unknown: use one of {', '.join(MODES)}")


def choose_sandbox(
    mode: str | None, allow_network: bool, settings: Settings, chimera_home: Path, *, auto: bool = False
) -> tuple[SandboxSettings, str]:
    """The sandbox for ``mode`` (``--sandbox``; None: config.toml's, else ``workspace``), ``allow_network``
    and ``auto`` (``--sandbox-auto``) over ``settings``, hiding ``chimera_home``; and the line to print at start
    ("" when there is nothing to say)."""
    check_mode(mode)
    chosen = SandboxSettings(
        mode=mode or settings.sandbox_mode or "workspace",
        allow_network=allow_network or settings.sandbox_network,
        auto=auto or settings.sandbox_auto,
        writable=tuple(
            Path(os.path.expanduser(p))
            for p in (*settings.sandbox_writable, *os.environ.get(WRITABLE_ENV, "").split(os.pathsep))
            if p
        ),
        hidden=tuple(Path(os.path.expanduser(p)) for p in settings.sandbox_hidden),
        chimera_home=chimera_home,
    )
    found = support()
    if chosen.on and found.available:
        tempdirs.sweep()  # what a Chimera killed by SIGKILL left behind
    if chosen.on and not found.available:
        return chosen, (
            f"commands are not sandboxed: {found.missing}; the permission rules alone guard them "
            "(--sandbox off says you know)"
        )
    return chosen, ""


def in_words(settings: SandboxSettings | None) -> tuple[str, str]:
    """Whether commands are sandboxed, for a person: a word or two for the status line (``sandboxed``,
    ``sandboxed, network on``, ``not sandboxed``), and a sentence for ``/mode`` saying what that means."""
    if settings is None or not settings.on:
        return "not sandboxed", "Commands are not sandboxed (--sandbox off): the permission rules alone guard them."
    found = support()
    if not found.available:
        return "not sandboxed", f"Commands are not sandboxed: {found.missing}; the permission rules alone guard them."
    network = "they may use the network" if settings.allow_network else "they have no network"
    auto = ""
    if settings.auto:
        auto = " With --sandbox-auto, a command only the mode would ask about runs unasked, confined."
    short = "sandboxed, network on" if settings.allow_network else "sandboxed"
    return short, (
        f"Commands run sandboxed ({found.mechanism}): they write only the workspace and a temporary folder of their "
        f"own, cannot read your secrets, and {network}.{auto}"
    )
