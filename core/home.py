"""Provides ``chimera_home``: the folder that holds all of Chimera's state.

``CHIMERA_HOME`` when set, else the platform's user data folder. Folders made
here are private to their owner (mode 0700).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from chimera.core.errors import ConfigError

__all__ = ["chimera_home", "private_dir"]


def chimera_home() -> Path:
    """The state folder, created private if missing."""
    configured = os.environ.get("CHIMERA_HOME")
    if configured:
        return private_dir(Path(configured).expanduser())
    if sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return private_dir(base / "chimera")


def private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed; the folder itself readable by its owner only."""
    try:
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        if os.name != "nt":
            path.chmod(0o700)
    except OSError as err:
        raise ConfigError(
            f"cannot use {path} for Chimera's state ({err.strerror or err}): set CHIMERA_HOME to a folder you own"
        ) from None
    return path
