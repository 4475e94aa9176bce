"""Provides ``chimera doctor``: what this machine lets Chimera do, starting with the sandbox its commands run in.

A command of its own rather than ``--version --verbose``: it reads the settings file and
asks the kernel, which ``--version`` (answered before anything else is parsed) must not
wait for, and it is where later checks of the machine (git, ripgrep) belong.
"""

from __future__ import annotations

from typing import TextIO

from chimera.core.home import chimera_home
from chimera.core.sandbox.choice import choose_sandbox
from chimera.core.sandbox.probe import support
from chimera.core.settings import load_settings
from chimera.tui.printing import line

__all__ = ["print_doctor"]


def print_doctor(out: TextIO) -> int:
    """Print the sandbox in use and what it cannot enforce; exit code 0."""
    home = chimera_home()
    chosen, _ = choose_sandbox(None, False, load_settings(home), home)
    found = support()
    if not chosen.on:
        line(out, f"sandbox: off (config.toml says so); this machine offers {found.describe()}")
    elif not found.available:
        line(out, f"sandbox: none: {found.missing}")
        line(out, "  commands run unconfined, guarded by the permission rules alone")
    else:
        network = "allowed" if chosen.allow_network else "no TCP connect or bind"
        line(out, f"sandbox: {found.describe()}: commands write only the workspace and a private TMPDIR,")
        line(out, f"  read all but the secrets under {chosen.home} and Chimera's state in {home}; network: {network}")
        for path in chosen.writable:
            line(out, f"  also writable: {path}")
        for path in chosen.hidden:
            line(out, f"  also hidden: {path}")
        line(out, "  git: the hooks and config a command changes in the workspace's git directory are put back")
        for what in found.unenforced:
            line(out, f"  not enforced: {what}")
    return 0
