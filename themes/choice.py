"""Provides the theme the person chose last, kept in ``CHIMERA_HOME/workbench.json`` (``{"theme": NAME}``).

The file is written whole (a temporary file renamed over it) and private to
its owner, as Chimera's other files are; a file that is damaged, too big or
not a regular file is a ``ThemeChoiceError`` saying so in one line, never a
crash: the default theme is used until a new choice replaces it.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path

from chimera.core.errors import ChimeraError
from chimera.core.tools.files import NotRegularFile, open_regular

__all__ = ["CHOICE_NAME", "ThemeChoiceError", "remember_theme", "remembered_theme"]

CHOICE_NAME = "workbench.json"
LARGEST = 64 * 1024  # bytes: the choice is one short line


class ThemeChoiceError(ChimeraError):
    """The remembered choice could not be read or written."""


def remembered_theme(home: Path) -> str | None:
    """The name of the theme last chosen, or None if none was; ThemeChoiceError if the file is damaged."""
    name = _choices(home / CHOICE_NAME).get("theme")
    if name is not None and not isinstance(name, str):
        raise ThemeChoiceError(f"{home / CHOICE_NAME} is damaged: remove it, or choose a theme again with /theme NAME")
    return name


def _choices(path: Path) -> dict[str, object]:
    """What the file holds (nothing when there is no file); ThemeChoiceError when it cannot be read as a choice."""
    try:
        with open_regular(path) as fh:
            data = fh.read(LARGEST + 1)
    except FileNotFoundError:
        return {}
    except NotRegularFile as err:
        raise ThemeChoiceError(f"{path} is {err.kind}, not Chimera's file: remove it") from None
    except OSError as err:
        raise ThemeChoiceError(f"{path} cannot be read ({err.strerror or err})") from None
    damaged = ThemeChoiceError(f"{path} is damaged: remove it, or choose a theme again with /theme NAME")
    if len(data) > LARGEST:
        raise damaged
    try:
        choices = json.loads(data)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, nested beyond reason
        raise damaged from None
    if not isinstance(choices, dict):
        raise damaged
    return choices


def remember_theme(home: Path, name: str) -> None:
    """Keep ``name`` as the theme chosen (other choices in the file are kept; a damaged file is replaced);
    ThemeChoiceError if it cannot be."""
    path = home / CHOICE_NAME
    try:
        choices = _choices(path)
    except ThemeChoiceError:
        choices = {}
    choices["theme"] = name
    try:
        fd, temp = tempfile.mkstemp(prefix=f".{CHOICE_NAME}.", dir=home)  # private: mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(choices, fh)
                fh.write("\n")
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as err:
        raise ThemeChoiceError(f"the theme chosen cannot be kept in {path} ({err.strerror or err})") from None
