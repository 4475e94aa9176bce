"""Provides workspace confinement: every path a tool touches resolves inside the workspace.

Paths are resolved with symlinks followed, so ``..``, absolute paths and links
that point out of the workspace are all refused the same way. A loop of links
(``a -> b -> a``) never reaches anything: a path through one is refused in one
line, never followed and never replaced.

A file name need not be UTF-8. Python reads its stray bytes as lone surrogates,
which no UTF-8 text (the model's, the events', the session's) can hold, so
names are shown with each such byte as ``\\xHH`` (``bad\\xff.txt``, as bash's
``$'…'`` writes it), and a path given back in that form finds the file.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from chimera.core.errors import WorkspaceError

__all__ = ["display_path", "is_link_loop", "printable", "real_path", "resolve_in_workspace"]

_ESCAPED_BYTE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")  # only bytes from 0x80 can fail to decode


def printable(text: str) -> str:
    """``text`` with every lone surrogate (a byte of a name that is not UTF-8) shown as ``\\xHH``: valid UTF-8."""
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name decodes to: escape it as a code point
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def real_path(path: str | Path) -> Path:
    """``path`` absolute, with every link followed as far as it leads; a loop of links is left unresolved.

    ``Path.resolve`` raises RuntimeError on a loop before Python 3.13; this never does.
    """
    return Path(os.path.realpath(path))


def is_link_loop(path: str | Path) -> bool:
    """True when reaching ``path`` goes round a loop of symbolic links (ELOOP)."""
    try:
        os.stat(path)
    except OSError as err:
        return err.errno == errno.ELOOP
    return False


def _given(root: Path, path: str) -> Path:
    candidate = Path(os.path.expanduser(path)) if path.startswith("~") else Path(path)
    return candidate if candidate.is_absolute() else root / candidate


def resolve_in_workspace(root: Path, path: str, *, extra_roots: tuple[Path, ...] = ()) -> Path:
    """Return ``path`` resolved against ``root``; raise WorkspaceError when it leaves it.

    ``extra_roots`` are further folders the caller may read (saved tool output).
    """
    if not isinstance(path, str) or not path.strip():
        raise WorkspaceError("the path is empty: give a path relative to the workspace")
    if "\x00" in path:
        raise WorkspaceError("the path contains a NUL byte")
    candidate = _given(root, path)
    if "\\x" in path and not os.path.lexists(candidate):
        # Given as printable() shows it: read each \xHH as the byte it stands for.
        raw = _given(root, _ESCAPED_BYTE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), path))
        if os.path.lexists(raw) or (os.path.lexists(raw.parent) and not os.path.lexists(candidate.parent)):
            candidate = raw
    resolved = real_path(candidate)
    for allowed in (root, *(real_path(r) for r in extra_roots)):
        if resolved == allowed or resolved.is_relative_to(allowed):
            if is_link_loop(resolved):
                raise WorkspaceError(
                    f"{printable(path)} is a symbolic link loop (it never reaches a file or folder): "
                    "fix or remove the link"
                )
            return resolved
    raise WorkspaceError(f"{path!r} is outside the workspace {root}: use a path inside it (relative paths are best)")


def display_path(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` when inside it, else as given; printable (see :func:`printable`)."""
    try:
        return printable(path.relative_to(root).as_posix() or ".")
    except ValueError:
        return printable(str(path))
