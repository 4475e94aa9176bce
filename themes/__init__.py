"""Provides Chimera's Textual themes and the path of the app stylesheet.

Themes are data: ``THEMES`` lists them for ``App.register_theme``; layout lives
in ``app.tcss`` next to this module.
"""

from __future__ import annotations

from pathlib import Path

from textual.theme import Theme

__all__ = ["APP_CSS", "DEFAULT_THEME", "THEMES"]

APP_CSS = Path(__file__).with_name("app.tcss")

CHIMERA_DARK = Theme(
    name="chimera-dark",
    primary="#7AA2F7",
    secondary="#BB9AF7",
    accent="#E0AF68",
    warning="#E0AF68",
    error="#F7768E",
    success="#9ECE6A",
    foreground="#C0CAF5",
    background="#16161E",
    surface="#1A1B26",
    panel="#24283B",
    dark=True,
)

CHIMERA_LIGHT = Theme(
    name="chimera-light",
    primary="#2E5BBA",
    secondary="#7847BD",
    accent="#B36B00",
    warning="#B36B00",
    error="#C4334B",
    success="#3C7A1E",
    foreground="#24283B",
    background="#F4F4F7",
    surface="#FFFFFF",
    panel="#E6E7ED",
    dark=False,
)

THEMES = (CHIMERA_DARK, CHIMERA_LIGHT)
DEFAULT_THEME = CHIMERA_DARK.name
