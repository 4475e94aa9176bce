"""Provides branch-and-compare: variants of one task run side by side from one point of a session.

``parse_specs`` reads the variants (``--try key=value[,key=value]``), a
``Comparison`` runs them (each on a scratch copy of the point's files, each
recorded as a branch of the session ending in a ``compare-N-LABEL``
checkpoint) and gives a ``Row`` for each; ``open_comparison`` opens a stored
session for one, the way ``chimera compare`` does.
"""

from __future__ import annotations

from chimera.core.compare.opening import open_comparison, session_comparison, session_policy
from chimera.core.compare.point import StartPoint, files_at, start_point
from chimera.core.compare.row import FileChange, Row, Tally
from chimera.core.compare.runner import MAX_JOBS, Comparison, Variant, strategy_for
from chimera.core.compare.spec import KEYS, VariantSpec, parse_spec, parse_specs

__all__ = [
    "KEYS",
    "MAX_JOBS",
    "Comparison",
    "FileChange",
    "Row",
    "StartPoint",
    "Tally",
    "Variant",
    "VariantSpec",
    "files_at",
    "open_comparison",
    "parse_spec",
    "parse_specs",
    "session_comparison",
    "session_policy",
    "start_point",
    "strategy_for",
]
