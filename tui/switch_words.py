"""Provides ``describe_switch``: a switch's preview in a few lines a person reads before answering.

Where the switch lands, what it leaves behind, each file it rewrites, creates or deletes, how many paths it leaves
alone because the agent did not make them, and the edits made
since the last snapshot (the person's, or made outside Chimera) that it would overwrite: saved first, so going
back brings them back. The tree panel's preview, ``/back`` and adopting a compared variant all say it so.
"""

from __future__ import annotations

from chimera.core.sessions.switch_preview import SwitchPreview
from chimera.core.terminal_text import terminal_safe
from chimera.core.wording import plural, point_name

__all__ = ["describe_switch"]

_FILES_SHOWN = 6


def describe_switch(preview: SwitchPreview, leaf: str | None, *, what: str = "Switch") -> str:
    """``preview`` as a few lines (``what``: the move's name, ``Switch``, ``Back`` or ``Adopt``); ``leaf`` is
    where the session stands now."""
    if preview.node == leaf and not preview.files:
        return "You are here: a switch changes nothing."
    lines = [f"{what}: lands at {point_name(preview.node)}" + (f", {preview.note}" if preview.note else "") + "."]
    lines.append(
        f"Leaves {plural(preview.turns, 'turn')} and ~{preview.tokens:,} tokens behind (kept in the tree)."
        if preview.turns or preview.tokens
        else "Leaves nothing behind."
    )
    if not preview.pinned:
        lines.append("No snapshot pins this point: the files stay as they are.")
    elif not preview.files:
        lines.append("No file changes.")
    else:
        lines.append(f"Files: {plural(len(preview.files), 'file')} change.")
        lines += [f"  {f.verb:<8}{f.path}  +{f.added} -{f.removed}" for f in preview.files[:_FILES_SHOWN]]
        if len(preview.files) > _FILES_SHOWN:
            lines.append(f"  … and {len(preview.files) - _FILES_SHOWN} more")
    if preview.pinned and preview.kept:
        lines.append(
            f"Leaves alone {plural(preview.kept, 'path')} the agent did not make (yours, or made outside Chimera)."
        )
    if preview.at_risk:
        named = ", ".join(preview.at_risk[:3]) + (
            f" and {len(preview.at_risk) - 3} more" if len(preview.at_risk) > 3 else ""
        )
        lines.append(f"Edits since the last snapshot it overwrites: {named} (saved first: /back brings them back).")
    return terminal_safe("\n".join(lines))
