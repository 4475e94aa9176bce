"""Provides ``replace_text``: write a file's new text atomically, keeping its permission bits.

The text goes to a temporary file beside the target, which then replaces it
in one rename: a crash or a kill midway leaves the old file or the new one,
never half of each.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["replace_text"]


def replace_text(path: Path, text: str) -> None:
    """Make ``path`` hold ``text`` (UTF-8, line endings as given)."""
    try:
        mode: int | None = stat.S_IMODE(path.stat().st_mode)
    except FileNotFoundError:
        mode = None
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".chimera-tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        if mode is not None:
            os.chmod(temp, mode)
        else:
            os.chmod(temp, 0o666 & ~_umask())
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current
