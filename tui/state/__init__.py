"""Provides the workbench's state, plain data built from step events (no Textual anywhere in it).

``WorkbenchState`` holds it all; its parts are the conversation (``Transcript``
and its ``Entry`` values, ``state.entry``), the open questions (``Questions``), the plan
(``PlanState``) and where the run stands (``RunStatus``).
"""

from __future__ import annotations

from chimera.tui.state.entry import FOLDS, Entry
from chimera.tui.state.plan import PlanState
from chimera.tui.state.questions import Question, Questions
from chimera.tui.state.run_status import RunStatus
from chimera.tui.state.transcript import LIVE_CHARS, LIVE_LINES, Transcript
from chimera.tui.state.workbench import WorkbenchState

__all__ = [
    "FOLDS",
    "LIVE_CHARS",
    "LIVE_LINES",
    "Entry",
    "PlanState",
    "Question",
    "Questions",
    "RunStatus",
    "Transcript",
    "WorkbenchState",
]
