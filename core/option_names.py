"""Provides ``LOOPS`` and ``MODES``: the names of the loop strategies and of the permission modes.

The command line, the settings file and the workbench's first frame check names against these without
loading the strategies (``loop_config``, ``loops``) or the permission policy (``permissions.policy``),
which re-export them.
"""

from __future__ import annotations

__all__ = ["LOOPS", "MODES"]

LOOPS = ("react", "plan", "reflexion", "tot")
MODES = ("ask", "accept-edits", "plan", "bypass")
