"""Provides theme files read into Textual themes: ``load_theme`` for one, ``UserThemes`` for a folder of them.

A theme file is TOML. Its top-level keys are the arguments of Textual's
``Theme`` (``name``, ``primary``, ``background``, ``dark``…, ``[variables]`` for
Textual's own CSS variables); its ``[transcript]`` and ``[code]`` tables hold
Chimera's colours (``chimera.themes.palette``), carried in the theme's
variables. Anything wrong (not TOML, a key no theme has, a value of the wrong
type, a colour that is not one, arrays or tables nested thousands deep) is a
``ThemeFileError``: one line naming the file, the line and the key, a value it
quotes cut short. Nothing here needs a running app.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import reprlib
import tomllib
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from textual.color import Color, ColorParseError
from textual.css.stylesheet import Stylesheet
from textual.theme import Theme

from chimera.core.errors import ChimeraError
from chimera.core.toml_nesting import DEEPEST, too_deep
from chimera.core.tools.files import NotRegularFile, open_regular
from chimera.themes.palette import TABLES, variable

__all__ = ["COLOURS", "LARGEST", "Reloaded", "ThemeFileError", "UserThemes", "load_theme", "parse_theme"]

LARGEST = 256 * 1024  # bytes: a theme is a few dozen lines, so a bigger file is not a theme
# Textual's Theme arguments by kind: colours, switches, fractions (then its variables, then Chimera's tables).
COLOURS: tuple[str, ...] = ("primary", "secondary", "accent", "warning", "error", "success")
COLOURS += ("foreground", "background", "surface", "panel", "boost")
_SWITCHES = ("dark", "ansi")
_FRACTIONS = ("luminosity_spread", "text_alpha")
_TOP = ("name", *COLOURS, *_SWITCHES, *_FRACTIONS, "variables", *TABLES)
_ANSI_VARIABLES = {"ansi-background": ("ansi_black", "ansi_white"), "ansi-foreground": ("ansi_white", "ansi_black")}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]*")
_VARIABLE = re.compile(r"\$([A-Za-z0-9_-]+)")  # a variable a CSS value names
_COLOUR_HELP = 'write #rrggbb, rgb(r, g, b), hsl(h, s%, l%) or a name such as "white"'


class ThemeFileError(ChimeraError):
    """A theme file that cannot be used: where (file, line) and why, in one line."""

    def __init__(self, path: Path, line: int | None, problem: str) -> None:
        self.path = path
        self.line = line
        self.problem = problem
        super().__init__(f"{path}, line {line}: {problem}" if line else f"{path}: {problem}")


def load_theme(path: Path, taken: Mapping[str, str] | None = None) -> Theme:
    """The theme in the file at ``path`` (a regular file of at most ``LARGEST`` bytes); ThemeFileError if it
    cannot be read or is not a theme. A file without ``name`` names its theme after itself. ``taken``: names
    the theme may not have, each with whose it is (``"a built-in theme's"``)."""
    try:
        with open_regular(path) as fh:
            data = fh.read(LARGEST + 1)
    except NotRegularFile as err:
        raise ThemeFileError(path, None, f"is {err.kind}, not a theme file: remove it from the folder") from None
    except OSError as err:
        raise ThemeFileError(path, None, f"cannot be read ({err.strerror or err})") from None
    if len(data) > LARGEST:
        raise ThemeFileError(path, None, f"is too big for a theme (over {LARGEST // 1024} KB)")
    try:
        text = data.decode("utf-8").removeprefix("\ufeff")  # a byte-order mark, as some editors write
    except UnicodeDecodeError:
        raise ThemeFileError(path, None, "is not UTF-8 text") from None
    return parse_theme(text, path, taken)


def parse_theme(text: str, path: Path, taken: Mapping[str, str] | None = None) -> Theme:
    """The theme ``text`` describes (``path`` names it in errors, and the theme when it has no ``name``)."""
    deep = too_deep(text)
    if deep is not None:  # before tomllib: it overflows its stack on deep arrays, and crawls over deep keys
        raise ThemeFileError(path, deep, _TOO_DEEP)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise _syntax_error(err, text, path) from None
    except RecursionError:  # what the scan above missed: never a traceback
        raise ThemeFileError(path, None, _TOO_DEEP) from None
    return _Reader(text, path, taken or {}).theme(data)


_TOO_DEEP = f"nested more than {DEEPEST} levels deep (a theme has tables of keys, no deeper): fix or remove it"
_SHOWN = reprlib.Repr()  # a value quoted in an error: a few levels and characters of it, however big or deep
_SHOWN.maxlevel, _SHOWN.maxstring, _SHOWN.maxother = 2, 60, 60


def _shown(value: object) -> str:
    """``value`` as Python writes it, cut short (a theme file is 256 KB at most, nested as deep as it likes)."""
    return _SHOWN.repr(value)


def _cut(key: str) -> str:
    """A key of the file as an error names it: at most 60 characters."""
    return key if len(key) <= 60 else key[:59] + "…"


def _syntax_error(err: tomllib.TOMLDecodeError, text: str, path: Path) -> ThemeFileError:
    """A TOML error as ``file, line N: not valid TOML: <what> (column C)``."""
    message = str(err)
    at = re.search(r"\(at line (\d+), column (\d+)\)$", message)
    if at:
        what = message[: at.start()].rstrip()
        return ThemeFileError(path, int(at.group(1)), f"not valid TOML: {what} (column {at.group(2)})")
    what = message.removesuffix("(at end of document)").rstrip()
    return ThemeFileError(path, text.count("\n") + 1, f"not valid TOML: {what} (at the end of the file)")


class _Reader:
    """Checks a parsed theme file key by key, naming the line of the key at fault."""

    def __init__(self, text: str, path: Path, taken: Mapping[str, str]) -> None:
        self.text = text
        self.path = path
        self.taken = taken

    def fail(self, where: tuple[str, ...], problem: str) -> ThemeFileError:
        return ThemeFileError(self.path, _line_of(self.text, where), problem)

    def theme(self, data: dict[str, Any]) -> Theme:
        for key, value in data.items():
            if key not in _TOP:
                kind = "table" if isinstance(value, dict) else "key"
                shown = f"[{_cut(key)}]" if kind == "table" else _cut(key)
                raise self.fail((key,), f"unknown {kind} {shown}{_nearest(key, _TOP)}")
        name = self.name(data.get("name"))
        if "primary" not in data:
            raise self.fail((), 'primary is missing: a theme needs at least its primary colour, as primary = "#7AA2F7"')
        fields: dict[str, Any] = {key: self.colour((key,), data[key]) for key in COLOURS if key in data}
        for key in _SWITCHES:
            if key in data:
                fields[key] = self.switch(key, data[key])
        for key in _FRACTIONS:
            if key in data:
                fields[key] = self.fraction(key, data[key])
        theme = Theme(name=name, **fields)
        variables = self.variables(data.get("variables", {}), theme)
        if theme.ansi:  # Textual's ANSI colours leave out two variables its CSS uses: given as its ANSI themes do
            for key, (dark, light) in _ANSI_VARIABLES.items():
                variables.setdefault(key, dark if theme.dark else light)
        for table, known in TABLES.items():
            for key, value in self.table(table, data.get(table, {}), known).items():
                variables[variable(table, key)] = self.colour((table, key), value)
        return dataclasses.replace(theme, variables=variables)

    def name(self, value: object) -> str:
        if value is None and self.path.stem in self.taken:
            raise self.fail((), f'the name {self.path.stem} is {self.taken[self.path.stem]}: add a line name = "mine"')
        if value is None:
            if _NAME.fullmatch(self.path.stem):
                return self.path.stem
            raise self.fail((), f'the file name {self.path.stem!r} cannot name a theme: add a line name = "my-theme"')
        if not isinstance(value, str) or not _NAME.fullmatch(value):
            shown = _shown(value)
            raise self.fail(("name",), f'name must be letters, digits, - and _ (such as "ocean-dark"), not {shown}')
        if value in self.taken:
            raise self.fail(("name",), f"the name {value} is {self.taken[value]}: give this theme another name")
        return value

    def colour(self, where: tuple[str, ...], value: object) -> str:
        key = ".".join(where)
        if not isinstance(value, str):
            raise self.fail(where, f'{key} must be a colour in quotes, such as "#7AA2F7", not {_shown(value)}')
        try:
            Color.parse(value)
        except ColorParseError:
            raise self.fail(where, f"{key}: {_shown(value)} is not a colour: {_COLOUR_HELP}") from None
        return value

    def switch(self, key: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise self.fail((key,), f"{key} must be true or false, not {_shown(value)}")
        return value

    def fraction(self, key: str, value: object) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
            raise self.fail((key,), f"{key} must be a number from 0 to 1, such as 0.15, not {_shown(value)}")
        return float(value)

    def table(self, table: str, value: object, known: Collection[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail((table,), f'{table} must be a table: a line [{table}], then lines such as key = "..."')
        for key in value:
            if key not in known:
                raise self.fail((table, key), f"unknown key {_cut(key)} in [{table}]{_nearest(key, known)}")
        return value

    def variables(self, value: object, theme: Theme) -> dict[str, str]:
        """Textual's own CSS variables (``footer-key-foreground``…): names Textual knows, values its CSS takes."""
        if value == {}:
            return {}
        generated = theme.to_color_system().generate()
        every = generated  # every name Textual knows: an ANSI theme's colours leave some out
        if theme.ansi:
            every = {**dataclasses.replace(theme, ansi=False).to_color_system().generate(), **generated}
        known = [name for name in every if name not in COLOURS]
        given = self.table("variables", value, known)
        # One stylesheet for them all when each is one value (a theme's usual case): a stylesheet reads the
        # theme's few hundred colours before its own rules, so one a variable cost more than the rest of the file.
        if all(_one_value(setting) for setting in given.values()) and _takes(given, generated, self.path):
            return dict(given)
        checked: dict[str, str] = {}
        for key, setting in given.items():  # something is wrong: the first variable at fault is named
            if not isinstance(setting, str):
                raise self.fail(("variables", key), f"variables.{key} must be a value in quotes, not {_shown(setting)}")
            if not _one_value(setting) or not _takes({key: setting}, generated, self.path):
                problem = f"variables.{key}: {_shown(setting)} is not a {_property(key)} value"
                raise self.fail(("variables", key), problem)
            checked[key] = setting
        return checked


def _one_value(setting: object) -> bool:
    """A variable's value is a string of one value, never more CSS."""
    return isinstance(setting, str) and not any(mark in setting for mark in ";{}\n")


def _property(variable: str) -> str:
    """The CSS property a Textual variable's value is checked as."""
    return "text-style" if variable.endswith("style") else "background" if "background" in variable else "color"


def _takes(settings: Mapping[str, str], generated: Mapping[str, str], path: Path) -> bool:
    """Whether Textual's CSS takes every one of ``settings`` (variable: value) as its property's value.

    The stylesheet is given only the variables the values name (``$primary``): it reads every one it is
    given before its rules, and a theme has a few hundred."""
    named = set(_VARIABLE.findall(" ".join(settings.values())))
    sheet = Stylesheet(variables={name: value for name, value in generated.items() if name in named})
    for key, setting in settings.items():
        sheet.add_source(f"Screen {{ {_property(key)}: {setting}; }}", read_from=(str(path), key))
    try:
        sheet.parse()
    except Exception:  # Textual's CSS errors have no common base besides this
        return False
    return True


def _nearest(name: str, known: Collection[str]) -> str:
    """': did you mean X?' for the known name nearest ``name``, else the known names."""
    near = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f": did you mean {near[0]}?" if near else f": the known ones are {', '.join(known)}"


_PART = r'(?:[A-Za-z0-9_-]+|"[^"]*"|\'[^\']*\')'
_KEY = re.compile(rf"\s*({_PART}(?:\s*\.\s*{_PART})*)\s*=")
_HEADER = re.compile(rf"\s*\[\[?\s*({_PART}(?:\s*\.\s*{_PART})*)\s*\]")  # [table] or [[array of tables]]


def _path(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in re.findall(_PART, dotted))


def _line_of(text: str, where: tuple[str, ...]) -> int | None:
    """The line where the key ``where`` (its tables, then itself) is set; failing that, where its nearest
    table is. None for the file as a whole (``where`` empty)."""
    if not where:
        return None
    found: dict[tuple[str, ...], int] = {}
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            table = _path(header.group(1))
            found.setdefault(table, number)
            continue
        key = _KEY.match(line)
        if key:
            full = table + _path(key.group(1))
            for depth in range(len(table) + 1, len(full) + 1):
                found.setdefault(full[:depth], number)
    for depth in range(len(where), 0, -1):
        if where[:depth] in found:
            return found[where[:depth]]
    return None


@dataclass
class Reloaded:
    """What reading some theme files changed: themes to register (new or changed), names whose file is
    gone, a theme's old name for its new one, and the files that could not be used."""

    themes: list[Theme] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    renamed: dict[str, str] = field(default_factory=dict)
    errors: list[ThemeFileError] = field(default_factory=list)


class UserThemes:
    """The person's themes: every ``*.toml`` file in ``folder``, by name. ``reserved`` names (the built-in
    themes') cannot be taken, nor can two files share one: the later file is refused."""

    def __init__(self, folder: Path, reserved: Collection[str]) -> None:
        self.folder = folder
        self.reserved = frozenset(reserved)
        self.names: dict[Path, str] = {}  # each file read, and the name of its theme

    def is_theme_file(self, path: Path) -> bool:
        """Whether ``path`` is one of the folder's theme files (by name: it may be gone)."""
        return path.parent == self.folder and path.suffix == ".toml" and not path.name.startswith(".")

    def load_all(self) -> Reloaded:
        """Read every theme file in the folder (in name order)."""
        try:
            paths = sorted(self.folder.iterdir())
        except OSError as err:
            return Reloaded(errors=[ThemeFileError(self.folder, None, f"cannot be listed ({err.strerror or err})")])
        return self.reload(paths)

    def reload(self, paths: Iterable[Path]) -> Reloaded:
        """Read ``paths`` again (those that are the folder's theme files): each loaded, gone or refused."""
        done = Reloaded()
        for path in sorted(set(paths)):
            if not self.is_theme_file(path):
                continue
            old = self.names.get(path)
            if not path.exists() and not path.is_symlink():
                if old is not None:
                    del self.names[path]
                    done.removed.append(old)
                continue
            taken = dict.fromkeys(self.reserved, "a built-in theme's")
            taken |= {name: f"taken by {other.name}" for other, name in self.names.items() if other != path}
            try:
                theme = load_theme(path, taken)
            except ThemeFileError as err:
                done.errors.append(err)  # a theme this file gave before stays as it was
                continue
            self.names[path] = theme.name
            done.themes.append(theme)
            if old is not None and old != theme.name:
                done.renamed[old] = theme.name
        return done
