"""Provides the sandbox: what the commands Chimera runs may touch (``policy``), the kernel's means of holding
them to it (``landlock``), and what this machine can enforce (``probe``); here, only its modes, which the
command line and the settings check without loading the rest."""

__all__ = ["MODES"]

MODES = ("workspace", "off")
