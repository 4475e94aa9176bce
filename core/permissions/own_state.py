"""Provides ``OwnState``: where Chimera's own state (CHIMERA_HOME) lies in a workspace, and what names it.

Chimera's home holds its settings (``config.toml``: the permission mode and
rules), the sessions it resumes (with their queued words and recorded
permissions), saved outputs and locks. When that folder lies inside the
workspace (a workspace of ``~`` holds ``~/.local/share/chimera``), an edit
there would let the agent change what it is allowed to do next time, so it is
never an ordinary edit: the policy asks about a ``write`` or ``edit`` of a path
inside it in every mode (unless an allow rule naming that path covers it), and
about a ``bash`` call whose words or redirections name it, even where commands
otherwise run unasked. Paths are compared with links resolved; a command's
words as the shell reads them (``~`` expanded, wildcards matched), and a
variable whose value holds the home (``$CHIMERA_HOME``, ``$HOME`` when the home
is below it) counts as naming it. This is a best effort for commands: a path
built at run time (``cd .local && …``) is not followed.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from chimera.core.tools.paths import real_path

__all__ = ["OwnState", "own_state"]

_VARIABLE = re.compile(r"\$\{?([A-Za-z_]\w*)")


@dataclass(frozen=True, slots=True)
class OwnState:
    """Chimera's home ``home`` (resolved), found at ``relative`` inside a workspace (a posix path, never ".")."""

    home: Path
    relative: str

    def holds(self, path: str) -> bool:
        """Whether the normalized workspace-relative ``path`` is the home or lies inside it."""
        return path == self.relative or path.startswith(self.relative + "/")

    def named_by(self, expansions: Iterable[str], environ: Mapping[str, str] | None = None) -> str:
        """The first of ``expansions`` (``$X``, ``${X…}``) whose variable holds the home or a folder above it."""
        env = os.environ if environ is None else environ
        for expansion in expansions:
            match = _VARIABLE.match(expansion)
            value = env.get(match[1], "") if match else ""
            if value.startswith("/") and self.home.is_relative_to(real_path(Path(value))):
                return expansion
        return ""


def own_state(home: Path | None, workspace: Path | None) -> OwnState | None:
    """Where ``home`` lies inside ``workspace``; None when either is unknown or the home is elsewhere."""
    if home is None or workspace is None:
        return None
    return _located(str(home), str(workspace))


@lru_cache(maxsize=16)
def _located(home: str, workspace: str) -> OwnState | None:
    real_home, real_workspace = real_path(Path(home)), real_path(Path(workspace))
    try:
        relative = real_home.relative_to(real_workspace).as_posix()
    except ValueError:
        return None
    return None if relative == "." else OwnState(real_home, relative)
