"""Provides the session commands of ``chimera``: ``sessions``, ``switch``, ``checkpoint``, ``export``.

Each prints for a person by default and, with ``--json``, one JSON document
for scripts (the shapes DESIGN §6 fixes). What a session holds is untrusted
(a model wrote it, or someone crafted the file): printed for a person, each
line shows every character that could steer a terminal as an escape; in JSON
the values stay exact.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TextIO

from chimera.core.errors import ConfigError
from chimera.core.home import chimera_home
from chimera.core.sessions.export import export_markdown
from chimera.core.sessions.listing import list_sessions
from chimera.core.sessions.log import SessionLog
from chimera.core.sessions.reading import Reader, summary
from chimera.core.sessions.store import SessionStore
from chimera.core.sessions.switching import SwitchPlan, name_checkpoint, switch_to
from chimera.core.sessions.tree import SessionTree
from chimera.core.sessions.workspace_lock import WorkspaceLock
from chimera.core.terminal_text import inert_json
from chimera.core.tools.paths import shown_name
from chimera.core.wording import command, plural, point_name
from chimera.tui.printing import line, warn_opened

__all__ = ["export_session", "label_checkpoint", "print_sessions", "switch_session"]


def print_sessions(out: TextIO, *, as_json: bool) -> int:
    """List every readable session on ``out``; name each unreadable one in one line on stderr; 0."""
    problems: list[str] = []
    sessions = list_sessions(chimera_home(), problems)
    for problem in problems:
        line(sys.stderr, f"chimera: {problem}")
    if as_json:
        out.write(inert_json(json.dumps([s.to_dict() for s in sessions], ensure_ascii=False)) + "\n")
        return 0
    if not sessions:
        out.write(
            "No readable sessions.\n" if problems else "No sessions yet: `chimera` or `chimera run TASK` starts one.\n"
        )
        return 0
    for info in sessions:
        when = dt.datetime.fromtimestamp(info.updated).strftime("%Y-%m-%d %H:%M")
        turns = plural(info.turns, "turn").rjust(len("9999 turns"))
        line(out, f"{info.id}  {when}  {turns}  {info.title}")
        ended = f"  · last run {info.ended.brief}" if info.ended is not None else ""
        line(out, f"            {info.workdir}{ended}")
    return 0


def export_session(session_id: str, target: Path | None, out: TextIO) -> int:
    with SessionStore.open(chimera_home(), session_id, writable=False) as store:
        warn_opened(store)
        document = export_markdown(store)
    if target is None:
        out.write(document)
        return 0
    try:
        target.write_text(document, encoding="utf-8")
    except OSError as err:
        raise ConfigError(f"cannot write {target}: {err.strerror or err}") from None
    return 0


def switch_session(session_id: str, ref: str, out: TextIO, *, yes: bool, ask: bool) -> int:
    """Move the session to ``ref`` (a node or a checkpoint name) and restore its files; show the preview first.

    Without ``yes`` the person confirms at the terminal (``ask``); with no terminal,
    a switch that rewrites files needs ``--yes``.
    """
    home = chimera_home()

    def confirm(plan: SwitchPlan) -> bool:
        """Show the plan and its preview; a switch that rewrites files needs a yes (``--yes``, or typed)."""
        _print_plan(store.id, store.tree, plan, out)
        count = len(plan.preview.changed) if plan.preview is not None else 0
        if not count or yes:
            return True
        if not ask:
            raise ConfigError(f"this switch rewrites {count} path{'s' if count != 1 else ''}: pass --yes")
        out.write("Go ahead? [y/N] ")
        out.flush()
        if input().strip().lower() in {"y", "yes"}:
            return True
        out.write("Nothing changed.\n")
        return False

    with SessionStore.open(home, session_id) as store:
        warn_opened(store)
        if not store.workdir.is_dir():
            raise ConfigError(f"the workspace {store.workdir} of session {store.id} is no longer there")
        with WorkspaceLock(home, store.workdir).exclusive(), contextlib.closing(SessionLog(store.folder)) as log:
            done = switch_to(store, ref, confirm=confirm, record=log)
    if done is None:
        return 1
    plan, before = done.plan, done.before
    if plan.interrupted is not None:
        line(
            out,
            f"Undone: the files are as they were before the interrupted switch, at {point_name(plan.node)}. "
            f"The files found before the undo are saved as {plan.saves}: "
            f"{command('switch', store.id, str(plan.saves))} brings them back.",
        )
    elif before is not None:
        line(out, f"Switched. {_way_back(store.tree, store.id, plan.leaf)} brings the files back as they were.")
    else:
        out.write("Switched.\n")
    return 0


def _print_plan(session_id: str, tree: SessionTree, plan: SwitchPlan, out: TextIO) -> None:
    if plan.interrupted is not None:
        cut = f"Session {session_id}'s switch to {point_name(plan.interrupted.to_node)} was cut short"
        line(out, f"{cut}: {plan.note[:1].upper()}{plan.note[1:]}.")
    elif plan.saved is not None:
        line(out, f"Switch session {session_id} to the files saved as {plan.saved}")
        line(out, f"  Lands {plan.note}.")
    else:
        reading = Reader(tree).read(plan.requested)
        line(out, f"Switch session {session_id} to {plan.requested} ({reading.part}: {summary(reading)})")
        if plan.note:
            line(out, f"  Lands {plan.note}.")
    _print_preview(plan, out)


def _way_back(tree: SessionTree, session_id: str, leaf: str | None) -> str:
    """How to return to ``leaf``, the point a switch left: a node, or before the first message."""
    if leaf is not None:
        return f"Switching back to {leaf}"
    first = next((n for n in tree.children.get(None, []) if tree.nodes[n].kind == "user"), None)
    if first is None:
        return "Switching back to before the first message"
    return f"Switching back to before the first message ({command('switch', session_id, first)})"


def _print_preview(plan: SwitchPlan, out: TextIO) -> None:
    preview = plan.preview
    if preview is None:
        out.write("  No snapshot pins this point: the files stay as they are.\n")
        return
    gone = (
        "  (the agent's tools made it)" if plan.interrupted is None else "  (the cut-short switch or the agent made it)"
    )
    appeared = [p for p in preview.keep if p in plan.appeared]
    edited = [p for p in preview.keep if p in plan.made]
    others = [p for p in preview.keep if p not in plan.appeared and p not in plan.made]
    rows = [
        ("rewrite", preview.rewrite, ""),
        ("create", preview.create, ""),
        ("delete", preview.delete, gone),
        ("keep", appeared, "  (appeared while a command ran: may be yours, kept)"),
        ("keep", edited, "  (the agent's tools made it, but it changed since: kept)"),
        ("keep", others, "  (not the agent's: never deleted)"),
        ("skip", preview.skip, "  (held by something no snapshot holds)"),
        ("keep", [f"{f}/" for f in preview.keep_folders], "  (a folder that is not the agent's: kept as it is)"),
    ]
    for verb, paths, note in rows:
        for path in paths:
            line(out, f"  {verb:<8}{shown_name(path)}{note}")
    if not preview.changed:
        nothing = preview.keep or preview.skip or preview.keep_folders
        out.write("  No file changes.\n" if nothing else "  The files already match.\n")
    if plan.unsaved:
        shown = ", ".join(map(shown_name, plan.unsaved[:8])) + (" …" if len(plan.unsaved) > 8 else "")
        line(out, f"  Changed since the last snapshot (kept in the pre-switch snapshot): {shown}")


def label_checkpoint(session_id: str, label: str, node_ref: str | None, out: TextIO, *, move: bool = False) -> int:
    """Name a node (the leaf by default); at the leaf, pin the workspace as it is now.

    A name already on another node is refused unless ``move``; the line printed says what happened.
    """
    with SessionStore.open(chimera_home(), session_id) as store:
        warn_opened(store)
        named = name_checkpoint(store, label, node_ref, move=move)
        gone = named.node == store.tree.leaf and not store.workdir.is_dir()
    snapshot = named.snapshot
    if gone:
        pinned = f"; the workspace {store.workdir} is gone, so it keeps the files last pinned there"
        pinned += f" (snapshot {snapshot[:12]})" if snapshot else " (none)"
    else:
        pinned = f", files pinned as snapshot {snapshot[:12]}" if snapshot else ", no files pinned"
    if named.moved_from is not None:
        what = f"Moved checkpoint {label!r} from {named.moved_from} to {named.node}"
    else:
        what = f"Checkpoint {label!r} at {named.node}"
    if named.also:
        what += f" (also named {', '.join(map(repr, named.also))})"
    line(out, f"{what}{pinned}. {command('switch', store.id, label)} comes back to it.")
    return 0
