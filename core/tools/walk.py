"""Provides the file walk that glob and grep share: sorted, skipping VCS and cache folders."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["SKIP_DIRS", "is_binary", "walk_files"]

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        "__pycache__",
        ".venv",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)


def walk_files(root: Path) -> Iterator[Path]:
    """Every regular file under ``root``, in sorted order, without following folder links."""
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        base = Path(dirpath)
        for name in sorted(filenames):
            path = base / name
            if path.is_file():
                yield path


def is_binary(path: Path) -> bool:
    """True when the first 8 KB hold a NUL byte (or the file cannot be read)."""
    try:
        with path.open("rb") as fh:
            return b"\x00" in fh.read(8192)
    except OSError:
        return True
