"""Provides the file walk glob and grep share: the files ripgrep would visit, in ripgrep's order.

- Order: each folder's entries sorted by name (bytes), a subfolder's files
  right after its name, as `rg --sort path` lists them.
- Skipped: symbolic links (never followed), anything but regular files,
  ``SKIP_DIRS``, hidden names (starting with ``.``) unless ``hidden`` is set.
- Ignored: what ``.gitignore`` files and ``.git/info/exclude`` ignore, inside a
  git repository (a folder holding ``.git`` or ``.jj``). Rule files of the
  enclosing folders up to the repository root apply, even above ``base``; a
  nested repository starts afresh; the deepest matching file wins, and
  ``.gitignore`` beats ``info/exclude``. Ignored folders are never entered.

File contents are decoded as ripgrep's BOM sniffing does (UTF-16 with a BOM,
else UTF-8, invalid bytes as U+FFFD); a file whose text holds a NUL anywhere is
binary. Only regular files are ever opened (rule files included): a FIFO put
in a file's place cannot block the walk.
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from chimera.core.tools.files import open_regular
from chimera.core.tools.gitignore import IGNORE, NONE, RuleFile, parse_rules

__all__ = ["SKIP_DIRS", "is_binary", "text_blocks", "walk_files"]

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

_CHUNK = 1 << 20


@dataclass(frozen=True, slots=True)
class _Level:
    """One folder's rule files; paths reach it as ``prefix + relative[strip:]``."""

    gitignore: RuleFile | None
    exclude: RuleFile | None
    prefix: bytes
    strip: int


@dataclass(frozen=True, slots=True)
class _Scope:
    """The rules that apply inside one folder, innermost first, cut at the repository root."""

    levels: tuple[_Level, ...] = ()
    in_repo: bool = False

    def enter(self, folder: str, names: set[str], prefix: bytes, strip: int) -> _Scope:
        level = _read_level(folder, names, prefix, strip)
        has_git = _has_git(folder, names)
        inner = (level,) if level.gitignore or level.exclude else ()
        return _Scope(inner + (() if has_git else self.levels), self.in_repo or has_git)

    def match(self, relative: bytes, is_dir: bool) -> int:
        if not self.in_repo:
            return NONE
        for level in self.levels:
            if level.gitignore and (found := level.gitignore.match(level.prefix + relative[level.strip :], is_dir)):
                return found
        for level in self.levels:
            if level.exclude and (found := level.exclude.match(level.prefix + relative[level.strip :], is_dir)):
                return found
        return NONE


def _read(path: str) -> bytes | None:
    try:
        with open_regular(path) as fh:
            return fh.read()
    except OSError:
        return None


def _has_git(folder: str, names: set[str]) -> bool:
    return any(name in names and os.path.exists(os.path.join(folder, name)) for name in (".git", ".jj"))


def _git_dir(folder: str) -> str:
    """Where ``info/exclude`` lives: ``.git``, or a linked worktree's common folder."""
    dot_git = os.path.join(folder, ".git")
    if not os.path.isfile(dot_git):
        return dot_git
    head = (_read(dot_git) or b"").split(b"\n", 1)[0].decode("utf-8", "replace")
    if not head.startswith("gitdir: "):
        return ""
    real = head[len("gitdir: ") :]
    common = (_read(os.path.join(real, "commondir")) or b"").split(b"\n", 1)[0].decode("utf-8", "replace")
    if not common:
        return ""
    return os.path.join(real, common) if common.startswith(".") else common


def _read_level(folder: str, names: set[str], prefix: bytes, strip: int) -> _Level:
    gitignore = exclude = None
    if ".gitignore" in names and (data := _read(os.path.join(folder, ".gitignore"))):
        gitignore = parse_rules(data)
    git_dir = _git_dir(folder) if ".git" in names else ""
    if git_dir and (data := _read(os.path.join(git_dir, "info", "exclude"))):
        exclude = parse_rules(data)
    return _Level(gitignore, exclude, prefix, strip)


def _listing(folder: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder) as it:
            entries = list(it)
    except OSError:
        return []
    entries.sort(key=lambda e: os.fsencode(e.name))
    return entries


def _outer_scope(base: str) -> _Scope:
    """The rules from folders above ``base``, up to the nearest enclosing repository root."""
    real = os.path.realpath(base)
    chain: list[str] = []
    folder = os.path.dirname(real)
    while True:
        chain.append(folder)
        names = {n for n in (".git", ".jj") if os.path.exists(os.path.join(folder, n))}
        if names:
            break
        parent = os.path.dirname(folder)
        if parent == folder:
            return _Scope()  # not inside a repository: nothing above base applies
        folder = parent
    scope = _Scope()
    for folder in reversed(chain):
        names = {n for n in (".gitignore", ".git", ".jj") if os.path.lexists(os.path.join(folder, n))}
        prefix = os.fsencode(os.path.relpath(real, folder)) + b"/"
        scope = scope.enter(folder, names, prefix, 0)
    return scope


def walk_files(base: Path, *, hidden: bool = False) -> Iterator[str]:
    """Posix paths, relative to the folder ``base``, of the files a search visits, in order."""
    root = os.fspath(base)
    entries = _listing(root)
    scope = _outer_scope(root).enter(root, {e.name for e in entries}, b"", 0)
    stack: list[tuple[str, Iterator[os.DirEntry[str]], _Scope]] = [("", iter(entries), scope)]
    while stack:
        prefix, it, scope = stack[-1]
        entry = next(it, None)
        if entry is None:
            stack.pop()
            continue
        name = entry.name
        if name.startswith(".") and not hidden:
            continue
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
            if not is_dir and not entry.is_file(follow_symlinks=False):
                continue
        except OSError:
            continue
        if is_dir and name in SKIP_DIRS:
            continue
        relative = prefix + name
        if scope.in_repo and scope.match(os.fsencode(relative), is_dir) == IGNORE:
            continue
        if not is_dir:
            yield relative
            continue
        children = _listing(entry.path)
        strip = len(os.fsencode(relative)) + 1
        child = scope.enter(entry.path, {e.name for e in children}, b"", strip)
        stack.append((relative + "/", iter(children), child))


def _sniff(first: bytes) -> tuple[str, int]:
    """The codec and BOM length ripgrep's BOM sniffing picks: UTF-16 with a BOM, else UTF-8."""
    if first.startswith(codecs.BOM_UTF8):
        return "utf-8", 3
    if first.startswith(codecs.BOM_UTF16_LE):
        return "utf-16-le", 2
    if first.startswith(codecs.BOM_UTF16_BE):
        return "utf-16-be", 2
    return "utf-8", 0


def _nul_after(fh: IO[bytes], codec: str) -> bool:
    decoder = codecs.getincrementaldecoder(codec)("replace")
    while chunk := fh.read(_CHUNK):
        if (b"\x00" in chunk) if codec == "utf-8" else ("\x00" in decoder.decode(chunk)):
            return True
    return False


def _probe(fh: IO[bytes]) -> tuple[codecs.IncrementalDecoder, str, bool] | None:
    """Decoder, first text and whether that was all, for a text file; None for a binary one."""
    first = fh.read(_CHUNK)
    codec, bom = _sniff(first)
    decoder = codecs.getincrementaldecoder(codec)("replace")
    done = len(first) < _CHUNK
    head = decoder.decode(first[bom:], final=done)
    if "\x00" in head or (not done and _nul_after(fh, codec)):
        return None
    fh.seek(len(first))
    return decoder, head, done


def is_binary(path: str | Path) -> bool:
    """True when the decoded file holds a NUL character anywhere (or it cannot be read)."""
    try:
        with open_regular(path, listed=True) as fh:
            return _probe(fh) is None
    except OSError:
        return True


def text_blocks(path: str | Path) -> Iterator[str] | None:
    """A text file decoded as ripgrep decodes it, in blocks of whole lines; None when binary or unreadable.

    UTF-8 (a BOM is dropped) or UTF-16 with a BOM; invalid bytes become U+FFFD.
    """
    try:
        fh = open_regular(path, listed=True)
    except OSError:
        return None
    try:
        probed = _probe(fh)
    except OSError:
        probed = None
    if probed is None:
        fh.close()
        return None
    return _blocks(fh, *probed)


def _blocks(fh: IO[bytes], decoder: codecs.IncrementalDecoder, text: str, done: bool) -> Iterator[str]:
    with fh:
        pending: list[str] = []
        while True:
            cut = text.rfind("\n") + 1
            if cut:
                yield "".join([*pending, text[:cut]])
                pending.clear()
            pending.append(text[cut:])
            if done:
                break
            raw = fh.read(_CHUNK)
            done = not raw
            text = decoder.decode(raw, final=done)
        if tail := "".join(pending):
            yield tail
