"""Provides the ripgrep (`rg`) backend of glob and grep: the pure-Python results, found faster.

`rg` is found on PATH (or next to the Python running Chimera); ``CHIMERA_RG``
names another binary, or ``off`` forces the pure-Python path. Flags pin
ripgrep to the walk in ``walk.py``: no config file, no ``.ignore``/``.rgignore``
and no global gitignore, hidden names and ``SKIP_DIRS`` excluded, sorted by
path, text decoded as UTF-8 with invalid bytes replaced (as Python does). Output is streamed record by record; the
callers filter paths with their own glob, so glob semantics stay identical.

A file whose text holds a NUL anywhere is binary and contributes nothing. ripgrep can
only tell late, after printing some of its lines, so a file's lines are held
until the next file starts; past ``_HOLD`` characters the file is checked
directly instead.

Regular expressions are Python's: patterns that ripgrep reads differently
(possessive quantifiers, `\\<`, nested or set-operation classes, verbose mode)
never reach it, and any ripgrep failure before output (such as lookaround it
cannot compile) raises ``RipgrepFailed`` so the caller runs the Python path.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from pathlib import Path

from chimera.core.credentials import clean_environment
from chimera.core.tools.walk import SKIP_DIRS, is_binary

__all__ = ["RipgrepFailed", "find_rg", "rg_can_run", "rg_files", "rg_grep"]

_READ = 1 << 16
_HOLD = 1 << 20
_INLINE_FLAGS = re.compile(r"\(\?([a-zA-Z-]*)[:)]")
_BASENAME_GLOB = re.compile(r"[^/\\\[\]!:?{},]*(?:\{[^/\\\[\]!:?{},]+(?:,[^/\\\[\]!:?{},]+)*\}[^/\\\[\]!:?{},]*)*")
_BINARY_NOTE = re.compile(
    rb"(.*): (?:WARNING: stopped searching binary file after match|binary file matches) "
    rb'\(found "\\0" byte around offset \d+\)',
    re.DOTALL,
)


class RipgrepFailed(Exception):
    """ripgrep could not give a trustworthy answer; use the Python path."""


def find_rg() -> str | None:
    """The ripgrep binary to use, or None for the pure-Python path."""
    setting = os.environ.get("CHIMERA_RG", "").strip()
    if setting.lower() == "off":
        return None
    if setting:
        return shutil.which(setting)
    found = shutil.which("rg")
    if found:
        return found
    sibling = Path(sys.executable).parent / "rg"
    return str(sibling) if os.access(sibling, os.X_OK) else None


def rg_can_run(pattern: str) -> bool:
    """False when ripgrep could read the Python pattern differently (it then never sees it)."""
    if "\n" in pattern or "\x00" in pattern:
        return False
    if any("x" in flags.group(1) for flags in _INLINE_FLAGS.finditer(pattern)):
        return False  # verbose mode treats spaces in classes differently
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            if not in_class and (pattern[i + 1 : i + 2] in ("<", ">") or pattern.startswith(("b{", "B{"), i + 1)):
                return False  # word-boundary assertions in ripgrep, literals in Python
            i += 2
            continue
        if in_class:
            if c == "[" or (c in "&-~|" and pattern[i + 1 : i + 2] == c):
                return False  # nested classes and set operations exist only in ripgrep
            in_class = c != "]"
        elif c == "[":
            i += 1 + (pattern[i + 1 : i + 2] == "^")
            i += pattern[i : i + 1] == "]"
            in_class = True
            continue
        elif c in "*+?}" and pattern[i + 1 : i + 2] == "+":
            return False  # possessive in Python, nested repetition in ripgrep
        i += 1
    return True


def _filters(hidden: bool, glob: str | None) -> list[str]:
    args = ["--sort=path", "--no-ignore-dot", "--no-ignore-global", "--no-messages", "--no-ignore-messages"]
    args.append("--hidden" if hidden else "--glob=!.*")
    args += [f"--glob=!{name}/" for name in sorted(SKIP_DIRS) if hidden or not name.startswith(".")]
    if glob and "/" not in glob and "**" not in glob and _BASENAME_GLOB.fullmatch(glob):
        # Types match file names only and never un-ignore a folder: a safe superset of our glob.
        args += [f"--type-add=chimeraglob:{glob}", "--type=chimeraglob"]
    return args


def _relative(path: bytes) -> str:
    return os.fsdecode(path[2:] if path.startswith(b"./") else path)


async def _drain(stream: asyncio.StreamReader | None) -> bytes:
    kept = b""
    while stream is not None and (chunk := await stream.read(_READ)):
        kept = (kept + chunk)[:4096]
    return kept


async def _records(argv: list[str], cwd: Path, sep: bytes) -> AsyncGenerator[bytes, None]:
    """ripgrep's output split at ``sep``, streamed; RipgrepFailed when it cannot be trusted."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=clean_environment(),
        )
    except OSError as err:
        raise RipgrepFailed(str(err)) from None
    errors = asyncio.ensure_future(_drain(proc.stderr))
    produced = False
    try:
        assert proc.stdout is not None
        pending: list[bytes] = []
        while chunk := await proc.stdout.read(_READ):
            produced = True
            *done, rest = chunk.split(sep)
            if done:
                done[0] = b"".join([*pending, done[0]])
                pending.clear()
                for record in done:
                    yield record
            pending.append(rest)
        if tail := b"".join(pending):
            yield tail
        code = await proc.wait()
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        stderr = await errors
    if code not in (0, 1) and not (code == 2 and produced):
        raise RipgrepFailed(f"rg exited with {code}: {stderr.decode('utf-8', 'replace').strip()}")


async def rg_files(rg: str, base: Path, *, hidden: bool, glob: str | None) -> AsyncGenerator[str, None]:
    """Paths relative to the folder ``base`` of the files the Python walk yields, in the same order."""
    argv = [rg, "--no-config", "--files", *_filters(hidden, glob), "--null", "--", "."]
    async with aclosing(_records(argv, base, b"\0")) as records:
        async for record in records:
            if record:
                yield _relative(record)


async def rg_grep(
    rg: str,
    base: Path,
    pattern: str,
    *,
    single: bool,
    ignore_case: bool,
    glob: str | None,
    hidden: bool,
    keep: Callable[[str], bool],
) -> AsyncGenerator[tuple[str, str, str], None]:
    """(path relative to ``base``, line number, line) for each matching line of a non-binary file.

    ``base`` is a folder, or (``single``) a file searched whatever its name.
    """
    where = ["--", base.name] if single else [*_filters(hidden, glob), "--", "."]
    cwd = base.parent if single else base
    argv = [rg, "--no-config", "--encoding=utf-8", "--line-number", "--no-heading", "--with-filename", "--null"]
    argv += ["--color=never", "--ignore-case" if ignore_case else "--case-sensitive", f"--regexp={pattern}", *where]
    held: list[tuple[str, str, str]] = []
    held_size = 0
    current: bytes | None = None
    relative = ""
    state = "drop"  # of the current file: "hold" its lines, "pass" them on, or "drop" them
    carry = b""
    async with aclosing(_records(argv, cwd, b"\n")) as records:
        async for record in records:
            nul = record.find(b"\0")
            note = _BINARY_NOTE.fullmatch(carry + record) if nul < 0 else None
            if nul < 0 and note is None:
                carry += record + b"\n"  # a file name holding a newline
                continue
            path = note.group(1) if note else carry + record[:nul]
            carry = b""
            if path != current:
                if state == "hold":
                    for item in held:
                        yield item
                held.clear()
                held_size = 0
                current, relative = path, _relative(path)
                state = "hold" if single or keep(relative) else "drop"
            if note is not None:
                state = "drop"  # binary after all
                held.clear()
            if state == "drop":
                continue
            number, _, text = record[nul + 1 :].partition(b":")
            item = (relative, number.decode("ascii"), text.decode("utf-8", "replace"))
            if state == "pass":
                yield item
                continue
            held.append(item)
            held_size += len(text)
            if held_size > _HOLD:
                binary = await asyncio.to_thread(is_binary, cwd / os.fsdecode(path))
                state = "drop" if binary else "pass"
                if not binary:
                    for item in held:
                        yield item
                held.clear()
    if state == "hold":
        for item in held:
            yield item
