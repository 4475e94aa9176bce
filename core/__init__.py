"""Provides the Chimera engine: events, the bus, providers, tools and the agent loop.

Nothing here imports a UI toolkit; the workbench and the headless runner both
drive the engine through this package's public modules.
"""
