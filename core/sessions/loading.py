"""Provides ``load_entries``: a session's meta and tree, read back from its ``entries.jsonl``.

Each line is checked whole before any of it counts (``records``); a damaged line is
skipped with one warning (past ``MAX_WARNINGS``, one line counts the rest), never
deleted. A last line without its newline that is a whole record is read; one cut
short mid-write is set aside (when repairing) or ignored.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chimera.core.errors import ConfigError
from chimera.core.sessions.files import ENTRIES
from chimera.core.sessions.jsonl import is_json_object, read_all, repair_tail
from chimera.core.sessions.records import add_plain_node, apply_record, parse_record
from chimera.core.sessions.tree import SessionTree

__all__ = ["MAX_WARNINGS", "load_entries"]

MAX_WARNINGS = 20  # damaged lines reported one by one; past these, one line counts the rest


def load_entries(fd: int, folder: Path, *, repair: bool) -> tuple[dict[str, Any], SessionTree, list[str]]:
    """The meta and tree the entries at ``fd`` hold, and one warning per damaged line.

    A last line without its newline that is a whole record is read (and, with ``repair``, given
    its newline); one cut short is set aside (with ``repair``) or ignored.
    """
    warnings: list[str] = []
    data = read_all(fd)
    end = data.rfind(b"\n") + 1
    lines = data[:end].splitlines()
    tail = data[end:]
    if tail and is_json_object(tail):
        lines.append(tail)
    elif tail and not repair:
        warnings.append(f"the last record is cut short ({len(tail)} bytes) and is ignored")
    if tail and repair and (aside := repair_tail(fd, folder, "entries", is_json_object)) is not None:
        warnings.append(aside)
    meta: dict[str, Any] = {}
    tree = SessionTree()
    damaged = 0
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            if not add_plain_node(line, meta, tree):  # a message laid out as the store writes it: most lines
                apply_record(parse_record(line), meta, tree)
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            damaged += 1
            if damaged <= MAX_WARNINGS:
                why = "nested too deeply" if isinstance(err, RecursionError) else str(err).strip("'\"")
                warnings.append(f"line {number} is damaged and was skipped ({why})")
    if damaged > MAX_WARNINGS:
        warnings.append(f"{damaged - MAX_WARNINGS} more damaged lines were skipped")
    if not meta:
        raise ConfigError(f"{folder / ENTRIES} has no session header: it is not a Chimera session (left untouched)")
    return meta, tree, warnings
