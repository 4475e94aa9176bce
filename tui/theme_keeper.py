"""Provides ``ThemeKeeper``: an app's themes, Chimera's and the person's, the one chosen, and reloads on save.

At start it registers the built-in themes (``chimera.themes``) and every theme
file in ``CHIMERA_HOME/themes/`` (``chimera.themes.loading.UserThemes`` reads
them), and puts on the theme chosen last (``chimera.themes.choice``): from the app's ``on_load``, so
the theme is on before Textual first parses the stylesheet (put on later, every style is parsed and
applied again before the first frame). Once the first frame is on screen, a worker
watches that folder with ``watchfiles.awatch``: a file saved is read again
and, if it is the theme in use, applied at once; a file that cannot be used
gives one notice naming it and the line at fault, and whatever theme it gave
before stays. Every theme put on (``switch``, Textual's palette) is remembered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from textual.app import App
from textual.notifications import SeverityLevel
from textual.theme import BUILTIN_THEMES, Theme
from textual.worker import WorkType

from chimera.core.errors import ChimeraError
from chimera.core.home import chimera_home, private_dir
from chimera.core.terminal_text import terminal_safe
from chimera.themes import DEFAULT_THEME, THEMES
from chimera.themes.choice import remember_theme, remembered_theme
from chimera.themes.loading import Reloaded, UserThemes
from chimera.tui.outside import tell

__all__ = ["FOLDER", "WATCH_STEP_MS", "ThemeKeeper"]

FOLDER = "themes"  # inside CHIMERA_HOME
WATCH_STEP_MS = 30  # a save is read once its file has been quiet this long (editors write in several steps)
PREFIX = "chimera-"  # /theme dark is chimera-dark


class ThemeKeeper:
    """The themes of ``app``: call :meth:`start` as it loads (``on_load``), :meth:`stop` when it unmounts."""

    def __init__(self, app: App[Any]) -> None:
        self.app = app
        self.home: Path | None = None
        self.user: UserThemes | None = None
        self.watching = asyncio.Event()  # set once saves to the theme files are being watched
        self.reloaded = asyncio.Event()  # set each time changed theme files have been read and applied
        self._stop = asyncio.Event()
        self._remembered: str | None = None

    @property
    def known(self) -> list[str]:
        """The names ``switch`` takes: Chimera's themes, the person's, then Textual's own."""
        names = list(self.app.available_themes)
        return sorted(names, key=lambda name: (name in BUILTIN_THEMES, not name.startswith(PREFIX), name))

    def start(self) -> None:
        """Register every theme, put on the one chosen last, and, after the first frame, watch the person's
        theme files (watchfiles and anyio take a while to import: nothing on the first screen needs them)."""
        for theme in THEMES:
            self.app.register_theme(theme)
        try:
            self.home = chimera_home()
        except ChimeraError as err:  # the session found it usable a moment ago: only a race gets here
            self._say(f"Your themes are not loaded: {err}")
            self.app.theme = DEFAULT_THEME
            return
        folder = self.home / FOLDER
        try:
            private_dir(folder)
        except ChimeraError:
            self._say(f"Your themes are not loaded: {folder} is not a folder: remove what is there, or make it one")
        else:
            self.user = UserThemes(folder, [theme.name for theme in THEMES] + list(BUILTIN_THEMES))
            self._apply(self.user.load_all())
            self.app.call_after_refresh(self._start_watching, folder)
        self.app.theme = self._chosen()
        self._remembered = self.app.theme  # what was kept stays kept until the person chooses again
        self.app.theme_changed_signal.subscribe(self.app, self._remember)

    def stop(self) -> None:
        """Stop watching the theme files."""
        self._stop.set()

    def switch(self, name: str) -> None:
        """Put on the theme called ``name`` (``dark`` for ``chimera-dark``), remembered for the next start;
        an unknown name is answered with one line listing the known ones."""
        known = self.app.available_themes
        found = name if name in known else f"{PREFIX}{name}" if f"{PREFIX}{name}" in known else None
        if found is None:
            shown = terminal_safe(name, one_line=True)
            self._say(f"No theme is called {shown!r}: the known ones are {', '.join(self.known)}.", "warning")
            return
        self.app.theme = found

    def _chosen(self) -> str:
        """The theme chosen last, if it is still there; else the default, saying why when it is not the first start."""
        assert self.home is not None
        try:
            name = remembered_theme(self.home)
        except ChimeraError as err:
            self._say(f"{err} (the default theme is on)", "warning")
            return DEFAULT_THEME
        if name is None or name in self.app.available_themes:
            return name or DEFAULT_THEME
        shown = terminal_safe(name, one_line=True)
        self._say(f"The theme chosen last, {shown}, is gone (its file was removed or broken): {DEFAULT_THEME} is on.")
        return DEFAULT_THEME

    def _remember(self, theme: Theme) -> None:
        """Another theme is on (``/theme``, the palette, a theme in use renamed): keep it for the next start."""
        if self.home is None or theme.name == self._remembered:
            return
        self._remembered = theme.name
        try:
            remember_theme(self.home, theme.name)
        except ChimeraError as err:
            self._say(f"{err}: it is on until Chimera quits", "warning")

    def _start_watching(self, folder: Path) -> None:
        async def watch() -> None:
            await self._watch(folder)

        # The work is given uncalled: if the app closes before the worker starts, no coroutine is left
        # unawaited (Python would print a warning on the terminal).
        work: WorkType[None] = watch
        if not self._stop.is_set():  # the app may have closed before its first frame was drawn
            self.app.run_worker(work, group="themes", exit_on_error=False)

    async def _watch(self, folder: Path) -> None:
        """Read the theme files again as they are saved, until :meth:`stop` (the watching thread sees it)."""
        from watchfiles import awatch  # here, not at the top: its import (and anyio's) waits for the first frame

        try:
            saves = awatch(folder, stop_event=self._stop, step=WATCH_STEP_MS, recursive=False)
            # Whoever waits for this runs once this task next waits, which is in the first step of the loop
            # below, after the watch is set up: a file saved from then on is seen.
            self.watching.set()
            async for changes in saves:
                assert self.user is not None
                self._apply(self.user.reload(Path(path) for _, path in changes))
                self.app.call_after_refresh(self.reloaded.set)
        except Exception as err:  # a watch the system refuses (too many watches): themes still load at start
            self._say(f"Theme files will not reload on save ({type(err).__name__}: {err}): restart to load changes.")

    def _apply(self, done: Reloaded) -> None:
        """Register what was read; the theme in use, changed (or renamed), is put on again at once."""
        in_use = self.app.theme
        for theme in done.themes:
            self.app.register_theme(theme)
        for old, new in done.renamed.items():
            if old == in_use:
                in_use = new
            self.app.unregister_theme(old)
        for name in done.removed:
            if name != in_use:  # the theme in use stays until another is chosen
                self.app.unregister_theme(name)
        for err in done.errors:
            self._say(f"Theme file not loaded: {err}", "error")
        if in_use != self.app.theme:
            self.app.theme = in_use
        elif any(theme.name == in_use for theme in done.themes):
            self.app.mutate_reactive(App.theme)  # the same name, new colours: apply them again

    def _say(self, text: str, severity: SeverityLevel = "error") -> None:
        tell(self.app, text, one_line=True, severity=severity, timeout=10)
