"""Provides ``why_it_may_leave``: whether a recorded tool call, run again in a scratch copy, provably stays there.

``chimera replay --rerun-tools`` runs recorded calls again in a scratch copy of
the files. A call is run again only when its text shows it acts inside the
folder it starts in; anything the reading cannot prove keeps its recorded
result and is reported. For ``bash`` the command is read with the same
tree-sitter parse the permission rules use (:func:`~chimera.core.permissions.shell.parse_line`),
so quoting, escapes, ``$'…'``, braces, line continuations, comments, wrappers
(``command``, ``builtin``, ``exec``, ``env``, ``sudo``, ``nohup``, ``time``…),
compound forms, functions, ``$(…)``, heredocs, and the strings given to
``bash -c``, ``eval``, ``trap`` or ``find -exec`` are all seen as bash sees
them. A command may leave, and is not run again, when:

- it cannot be read whole (a string only known at run time given to a shell
  or ``eval``, ``source``, a script fed to a shell on its input, text that is
  not complete syntax: what the parse calls opaque);
- it changes folder anywhere (``cd``, ``pushd``, ``popd``, in any position or
  behind any wrapper: even ``cd sub`` may follow a link);
- it defines aliases or loads builtins (``alias``, ``enable``), which make a
  later word run something else;
- it takes words from its input when it runs (``xargs``);
- it holds an expansion other than bash's numeric parameters (``$?``, ``$#``,
  ``$$``, ``$!``, ``$-``) and plain environment variables: ``$(…)``, a backquote,
  ``<(…)``, arithmetic, ``${x:-…}`` and its kin, positional parameters (``$1``,
  ``$@``, which a function may join into ``..``), an assignment of an array, a variable bash
  sets itself (``$HOME``, ``$PWD``, ``$OLDPWD``, ``$_``…) or the command sets
  (``d=..``, ``for d in``, ``read d``), or one whose value is not a plain word
  (a path, anything with ``/``, ``~``, a space or ``..``). A plain environment
  variable (``$LANG``, ``"$WEATHER"``) is replaced by its value and the command
  judged as bash will expand it, so ``"$EMPTY/tmp/x"`` is ``/tmp/x``;
- a word, a redirection target or an assigned value names a place outside: an
  absolute path (``/tmp/x``, ``> /tmp/x``, ``--out=/x``, ``-C/x``, a path inside
  a quoted string) other than ``/dev/null`` and the standard streams, a home
  path (``~``, ``~user``), a step up (``..``), a wildcard that may match ``..``
  (``.*``), a ``file://`` address, or the original workspace itself.

A link leading out of the scratch copy is removed when the copy is made and
after every call run again (:func:`remove_links_out`), so a link one call's
program made is gone before the next call could follow it. Other tools are
judged by their ``path`` (resolved in the scratch copy, links
followed) and a ``glob`` pattern. This is a guard rail read from the text, not
a sandbox: what a program does from its own code (an interpreter's ``-c``, a
script, a Makefile, an archive it unpacks) is not followed.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from chimera.core.errors import WorkspaceError
from chimera.core.tools.paths import real_path, resolve_in_workspace

__all__ = ["remove_links_out", "why_it_may_leave"]

_FOLDER_CHANGERS = frozenset({"cd", "pushd", "popd"})
_REDEFINERS = frozenset({"alias", "enable"})
_FROM_INPUT = frozenset({"xargs"})
_SYSTEM_BIN = frozenset(
    {"/bin", "/usr/bin", "/usr/local/bin", "/sbin", "/usr/sbin", "/usr/local/sbin", "/opt/homebrew/bin"}
)
# Parameters bash sets to a number or its flags, never a path; judged as a stand-in value of that kind.
_SPECIAL_PARAMETER = re.compile(r"\$(?:([?#$!-])|\{([?#$!-])\})")
_SPECIAL_VALUES = {"?": "0", "#": "0", "$": "1", "!": "1", "-": "hB"}
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.,:+%@=-]*")
_MAX_SUBSTITUTIONS = 3
# Variables bash sets or reads itself, whatever the environment holds (with BASH*, COMP_*, READLINE_*).
_SET_BY_BASH = frozenset(
    {"_", "CDPATH", "COPROC", "DIRSTACK", "EPOCHREALTIME", "EPOCHSECONDS", "EUID", "FUNCNAME", "GROUPS", "HISTCMD"}
    | {"HOME", "HOSTNAME", "HOSTTYPE", "IFS", "LINENO", "MACHTYPE", "MAPFILE", "OLDPWD", "OPTARG", "OPTIND"}
    | {"OSTYPE", "PATH", "PIPESTATUS", "PPID", "PWD", "RANDOM", "REPLY", "SECONDS", "SHELLOPTS", "SHLVL"}
    | {"SRANDOM", "TMPDIR", "UID"}
)
_HARMLESS = re.compile(r"/dev/(?:null|stdin|stdout|stderr|fd/\d+)")
_URL = re.compile(r"\b(?!file:)[A-Za-z][A-Za-z0-9+.\-]*://[^\s'\"]*")
_NAME_CHARS = r"\w.~+%\-"  # characters that may come before a `/` inside a relative name
_ABSOLUTE = re.compile(rf"(?<![{_NAME_CHARS}/])/[^\s\"';&|<>()`,]*")
_HOME = re.compile(rf"(?<![{_NAME_CHARS}/])~[^\s\"';&|<>()`,]*")
_UP = re.compile(rf"(?<![{_NAME_CHARS}])\.\.(?![{_NAME_CHARS}])")
_DOT_GLOB = re.compile(r"(?:^|/)\.[^/]*[*?\[]")


def why_it_may_leave(
    tool: str, args: dict[str, Any], *, scratch: Path, original: Path, environ: Mapping[str, str] | None = None
) -> str | None:
    """Why the call of ``tool`` with ``args`` may act outside ``scratch`` (or in ``original``); None when it stays.

    ``environ`` is the environment a command runs with (by default, the one the ``bash`` tool gives it).
    """
    if tool == "bash":
        if environ is None:
            from chimera.core.tools.bash import scrubbed_environment

            environ = scrubbed_environment()
        return _command(str(args.get("command", "")), original, environ)
    for key in ("path", "pattern"):
        value = args.get(key)
        if not isinstance(value, str) or not value.strip():
            continue
        if key == "pattern" and not value.startswith(("/", "~")) and ".." not in value.split("/"):
            continue
        try:
            resolve_in_workspace(scratch, value)
        except WorkspaceError:
            return f"it names {value}, outside the scratch copy"
    return None


def _command(command: str, original: Path, environ: Mapping[str, str], depth: int = 0) -> str | None:
    from chimera.core.permissions.shell import parse_line

    for place in {str(original), str(real_path(original))}:
        if place in command:
            return f"it names {place}, outside the scratch copy"
    line = parse_line(command)
    if line.opaque:
        return f"what it runs cannot be read from its text ({line.opaque})"
    values: dict[str, str] = {}
    for expansion in line.expansions:
        special = _SPECIAL_PARAMETER.fullmatch(expansion)
        if special:
            values[expansion] = _SPECIAL_VALUES[special[1] or special[2]]
            continue
        name, why = _variable(expansion, command, environ)
        if why or depth >= _MAX_SUBSTITUTIONS:
            return why or f"it names {_shown(expansion)}, known only when it runs"
        values[expansion] = environ.get(name, "")
    if values:  # each a plain word: judge the command as bash will expand it ("$EMPTY/tmp/x" is /tmp/x)
        shapes = "|".join(re.escape(e) + (r"(?!\w)" if e[-1].isalnum() or e[-1] == "_" else "") for e in values)
        return _command(re.sub(shapes, lambda m: values[m[0]], command), original, environ, depth + 1)
    texts: list[str] = [*line.reads, *line.writes]
    for name, value in line.assignments:
        if value is None:
            return f"it sets {name} to a value known only when it runs"
        texts.append(value)
    for invocation in line.invocations:
        for layer in invocation.layers:
            why = _layer(layer.name, layer.word, bare=not layer.args)
            if why:
                return why
            texts += [arg.text for arg in layer.args if arg.text is not None]
            texts += [arg.glob for arg in layer.args if arg.glob]
            dotted = next((arg.glob for arg in layer.args if arg.glob and _DOT_GLOB.search(arg.glob)), None)
            if dotted is not None:
                return f"it names {dotted}, a wildcard that may match .. (a step up)"
    for text in texts:
        why = _place(text)
        if why:
            return why
    return None


def _variable(expansion: str, command: str, environ: Mapping[str, str]) -> tuple[str, str]:
    """The name of the environment variable ``expansion`` reads, and why its value may lead elsewhere ("" if not).

    Only ``$NAME`` and ``${NAME}`` of a variable that the command never sets or names otherwise (no
    ``NAME=``, ``for NAME``, ``read NAME``…), that bash does not set itself, and whose value in
    ``environ`` is a plain word (no ``/``, ``~``, space, quote or ``..``) can be known before it runs.
    """
    match = _VARIABLE.fullmatch(expansion)
    unknown = f"it names {_shown(expansion)}, known only when it runs, which may lead outside the scratch copy"
    if match is None:
        return "", unknown
    name = match[1] or match[2]
    if name in _SET_BY_BASH or name.startswith(("BASH", "COMP_", "READLINE_")):
        return name, unknown
    rest = re.sub(rf"\$(?:\{{{name}\}}|{name}(?!\w))", "", command)
    if re.search(rf"(?<![\w$]){name}(?!\w)", rest):
        return name, f"it names ${name}, which the command itself may set, so it is known only when it runs"
    value = environ.get(name, "")
    if not _PLAIN_VALUE.fullmatch(value) or ".." in value:
        return name, f"it names ${name}, which may lead outside the scratch copy"
    return name, ""


def _layer(name: str, word: str, *, bare: bool) -> str:
    """Why running the command ``word`` (base name ``name``; ``bare``: with no words) may leave the folder."""
    if name == "cd" and bare:
        return "it changes folder to the home folder (a bare cd)"
    if name in _FOLDER_CHANGERS:
        return f"it changes folder ({name}), which may leave the scratch copy"
    if name in _REDEFINERS:
        return f"{name} makes a later word run something else"
    if name in _FROM_INPUT:
        return f"{name} takes its words from its input when it runs, so they may name places outside the scratch copy"
    if "/" in word and posixpath.dirname(posixpath.normpath(word)) not in _SYSTEM_BIN:
        return _place(word)
    return ""


def _place(text: str) -> str:
    """Why the literal ``text`` (a word, a target, a value) names a place outside the folder ("" when it does not)."""
    candidates = [text]
    if text.startswith("-") and not text.startswith("--"):  # a value attached to a flag: -C/etc, -fo.., -o~/x
        letters = re.match(r"-[A-Za-z0-9]{1,16}", text)
        end = letters.end() if letters else 1
        candidates += [text[at:] for at in range(2, end + 1)]
    for candidate in candidates:
        candidate = _URL.sub("", candidate)
        for match in _ABSOLUTE.finditer(candidate):
            if not _HARMLESS.fullmatch(match.group()):
                return f"it names {match.group()}, outside the scratch copy"
        home = _HOME.search(candidate)
        if home:
            return f"it names {home.group()}, outside the scratch copy"
        if _UP.search(candidate):
            return "it names .. (a step up), which may lead outside the scratch copy"
    return ""


def _shown(expansion: str) -> str:
    """An expansion as the reason names it: whole, so a secret in it is masked whole where the reason is shown."""
    return " ".join(expansion.split())


def remove_links_out(scratch: Path) -> list[str]:
    """Remove every link in ``scratch`` that leads outside it (or loops); return their paths, relative to it.

    Run when the scratch copy is made and after every call run again there: a link a program made
    (which the reading of the command cannot see) is gone before another call could follow it.
    """
    removed = []
    root = real_path(scratch)
    for folder, dirs, files in os.walk(scratch):
        for name in dirs + files:
            entry = Path(folder, name)
            if entry.is_symlink() and not _inside(entry, root):
                entry.unlink()
                removed.append(entry.relative_to(scratch).as_posix())
    return removed


def _inside(link: Path, root: Path) -> bool:
    try:
        return link.resolve().is_relative_to(root)
    except (OSError, RuntimeError):  # a loop of links
        return False
