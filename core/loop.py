"""The seeds' import path for the default strategy: ``from chimera.core.loop import ReAct``."""

from chimera.core.loops.react import ReAct

__all__ = ["ReAct"]
