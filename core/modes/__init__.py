"""Provides the front ends of a ``Session`` other than the workbench and ``chimera run`` (``core/headless.py``):
``acp``, the agent editors and clients drive over the Agent Client Protocol."""
