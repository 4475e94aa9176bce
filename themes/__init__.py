"""Provides Chimera's Textual themes, read from the TOML files beside this module, and the app stylesheet's path.

``THEMES`` lists them for ``App.register_theme`` (dark, light, high contrast);
``chimera.themes.loading`` reads a theme file, ``chimera.themes.palette`` holds
the transcript's and the code's colours, ``chimera.themes.choice`` the theme
the person last chose. Layout lives in ``app.tcss``.
"""

from __future__ import annotations

from pathlib import Path

from chimera.themes.loading import load_theme

__all__ = [
    "APP_CSS",
    "BUILT_IN",
    "CHIMERA_DARK",
    "CHIMERA_HIGH_CONTRAST",
    "CHIMERA_LIGHT",
    "DEFAULT_THEME",
    "THEMES",
]

_HERE = Path(__file__).parent
APP_CSS = _HERE / "app.tcss"
BUILT_IN = tuple(_HERE / f"{name}.toml" for name in ("dark", "light", "high-contrast"))

CHIMERA_DARK, CHIMERA_LIGHT, CHIMERA_HIGH_CONTRAST = THEMES = tuple(load_theme(path) for path in BUILT_IN)
DEFAULT_THEME = CHIMERA_DARK.name
