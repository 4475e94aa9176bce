"""Provides workspace confinement: every path a tool touches resolves inside the workspace.

Paths are resolved with symlinks followed, so ``..``, absolute paths and links
that point out of the workspace are all refused the same way. A loop of links
(``a -> b -> a``) never reaches anything: a path through one is refused in one
line, never followed and never replaced.

A file name need not be UTF-8. Python reads its stray bytes as lone surrogates,
which no UTF-8 text (the model's, the events', the session's) can hold, so
names are shown (:func:`shown_name`) with each such byte as ``\\xHH``
(``bad\\xff.txt``, as bash's ``$'…'`` writes it) and each backslash doubled, so a
file really named ``bad\\xff.txt`` shows as ``bad\\\\xff.txt`` and two names never
look alike. A path given back in the shown form finds the file.
"""

from __future__ import annotations

import errno
import os
import re
from pathlib import Path

from chimera.core.errors import WorkspaceError

__all__ = ["display_path", "is_link_loop", "printable", "real_path", "resolve_in_workspace", "shown_name"]

# What shown_name() writes: a doubled backslash, or a byte from 0x80 (only those can fail to decode).
_ESCAPE = re.compile(r"\\(\\|x[89a-fA-F][0-9a-fA-F])")


def printable(text: str) -> str:
    """``text`` with every lone surrogate (a byte of a name that is not UTF-8) shown as ``\\xHH``: valid UTF-8.

    For text that holds names among other things (a tool's whole output); a name alone
    is shown with :func:`shown_name`, which also tells a real backslash apart.
    """
    if text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate no file name decodes to: escape it as a code point
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return raw.decode("utf-8", "backslashreplace")


def shown_name(name: str) -> str:
    """A file name (or a relative path) as tools show it: backslashes doubled, stray bytes as ``\\xHH``."""
    return printable(name.replace("\\", "\\\\"))


def _unescaped(path: str) -> str:
    """``path`` read as :func:`shown_name` writes names: ``\\\\`` is a backslash, ``\\xHH`` that byte."""
    return _ESCAPE.sub(lambda m: "\\" if m.group(1) == "\\" else chr(0xDC00 + int(m.group(1)[1:], 16)), path)


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
    if "\\" in path and (unescaped := _unescaped(path)) != path:
        # Read as shown_name() shows names, unless only the path as typed exists.
        named = _given(root, unescaped)
        if os.path.lexists(named) or not os.path.lexists(candidate):
            candidate = named
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
    """``path`` relative to ``root`` when inside it, else as given; as :func:`shown_name` shows names."""
    try:
        return shown_name(path.relative_to(root).as_posix() or ".")
    except ValueError:
        return shown_name(str(path))
