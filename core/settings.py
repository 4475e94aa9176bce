"""Provides the person's settings file: ``CHIMERA_HOME/config.toml``.

```toml
[permissions]
mode = "ask"                                   # ask | accept-edits | plan | bypass
allow = ["bash(git status*)", "bash(pytest*)"]
deny = ["bash(rm -rf *)"]

[tree]
summarize_left = false                         # true: leaving a branch summarizes it (one key says not to)

[sandbox]                                      # or, for its mode alone, at the top: sandbox = "off"
mode = "workspace"                             # workspace | off: what commands may touch (core/sandbox)
network = false                                # true: commands may use the network (--allow-network)
auto = false                                   # true: commands only the mode asks about run unasked (--sandbox-auto)
writable = ["~/.cache/pip"]                    # more folders commands may write
hidden = ["~/work/secrets"]                    # more paths commands may not read

[mcp.servers.db]                               # tools from MCP servers: core/mcp/config.py says how
command = "uvx"
args = ["mcp-server-sqlite", "--db-path", "${HOME}/app.db"]
```

Flags override the mode and add to the rules. A file that cannot be read, a
table or key Chimera does not know (a misspelled ``[permission]`` or ``denny``
would leave a rule off), or a rule naming a tool that does not exist is a
ConfigError naming the file, the fault and the nearest known name. So is a
settings file that is not a regular file (a FIFO would hold start-up until
someone wrote to it, ``/dev/zero`` would be read for ever) or is bigger than
settings ever are (``LARGEST``): it is refused before anything is read.
"""

from __future__ import annotations

import difflib
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from chimera.core.errors import ConfigError
from chimera.core.mcp.config import SEARCH_THRESHOLD, ServerConfig, search_threshold_from_table, servers_from_table
from chimera.core.option_names import MODES
from chimera.core.sandbox import MODES as SANDBOX_MODES
from chimera.core.toml_nesting import DEEPEST, too_deep
from chimera.core.tools.files import NotRegularFile, open_regular

__all__ = ["CONFIG_NAME", "Settings", "load_settings"]

CONFIG_NAME = "config.toml"
KNOWN: dict[str, frozenset[str]] = {
    "permissions": frozenset({"mode", "allow", "deny"}),
    "tree": frozenset({"summarize_left"}),
    "sandbox": frozenset({"mode", "network", "auto", "writable", "hidden"}),
    "mcp": frozenset({"servers", "search_threshold"}),  # each server's own keys are checked by core/mcp/config.py
}
LARGEST = 1 << 20  # bytes: settings are a few lines, so a bigger file is not settings


@dataclass(frozen=True, slots=True)
class Settings:
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    summarize_left: bool = False  # leaving a branch summarizes it by default
    sandbox_mode: str | None = None  # None: the default (workspace where the machine can)
    sandbox_network: bool = False
    sandbox_auto: bool = False
    sandbox_writable: tuple[str, ...] = ()  # as written: ``~`` is expanded when the sandbox is made
    sandbox_hidden: tuple[str, ...] = ()
    mcp_servers: tuple[ServerConfig, ...] = ()
    mcp_search_threshold: float = SEARCH_THRESHOLD


def _strings(value: object, where: str, path: Path, example: str = '["bash(git status*)"]') -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{path}: {where} must be a list of strings such as {example}")
    return tuple(value)


def _nearest(name: str, known: list[str]) -> str:
    """': did you mean X?' for the known name nearest ``name`` (brackets and tables aside), else the list of them."""
    bare: dict[str, str] = {}
    for k in known:  # a name two tables share (mode) goes to the first: [permissions] before [sandbox]
        bare.setdefault(k.strip("[]").rpartition(".")[2], k)
    bare |= {k.strip("[]"): k for k in known}
    near = [bare[n] for n in difflib.get_close_matches(name, list(bare), n=1, cutoff=0.6)]
    return f": did you mean {near[0]}?" if near else f": the known ones are {', '.join(known)}"


def _check_names(data: dict[str, Any], path: Path) -> None:
    """Refuse a table or key Chimera does not know, naming the nearest known one."""
    keys = [f"{table}.{key}" for table, names in KNOWN.items() for key in sorted(names)]
    for table, value in data.items():
        if table not in KNOWN and isinstance(value, dict):
            raise ConfigError(f"{path}: unknown table [{table}]{_nearest(table, [f'[{t}]' for t in KNOWN])}")
        if table not in KNOWN:
            raise ConfigError(f"{path}: unknown key {table}{_nearest(table, [*KNOWN, *keys])}")
        if isinstance(value, dict):
            for key in value:
                if key not in KNOWN[table]:
                    near = _nearest(f"{table}.{key}", [k for k in keys if k.startswith(table + ".")])
                    raise ConfigError(f"{path}: unknown key {table}.{key} in [{table}]{near}")


def _read(path: Path) -> str:
    """The text of ``path``, a regular file of at most ``LARGEST`` bytes (through a link, as a dotfile manager
    makes it); NotRegularFile for anything else, ConfigError when it is too big."""
    with open_regular(path) as fh:
        data = fh.read(LARGEST + 1)
    if len(data) > LARGEST:
        raise ConfigError(
            f"the settings file {path} is too big for settings (over {LARGEST >> 20} MB): "
            "check it is the file you meant, or remove it"
        )
    return data.decode("utf-8")


def load_settings(home: Path) -> Settings:
    """Read ``home/config.toml``; no file means defaults."""
    path = home / CONFIG_NAME
    try:
        text = _read(path)
    except FileNotFoundError:
        return Settings()
    except NotRegularFile as err:
        raise ConfigError(
            f"the settings file {path} is {err.kind}, not a regular file: replace it with a file, or remove it"
        ) from None
    except (OSError, UnicodeError) as err:
        raise ConfigError(f"cannot read the settings file {path}: {err}") from None
    deep = too_deep(text)
    if deep is not None:  # before tomllib: it overflows its stack on deep arrays, and crawls over deep keys
        raise ConfigError(
            f"the settings file {path}, line {deep}, nests more than {DEEPEST} levels deep: fix it or remove it"
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        if _sandbox_twice(text):
            raise ConfigError(
                f'{path}: sandbox = "…" and a [sandbox] table are both given: keep one '
                '(in the table, the shorthand is its mode = "…")'
            ) from None
        raise ConfigError(f"the settings file {path} is not valid TOML ({err}): fix it or remove it") from None
    except RecursionError:  # what the scan missed: never a traceback
        raise ConfigError(f"the settings file {path} nests too deeply: fix it or remove it") from None
    _check_names(data, path)
    permissions = data.get("permissions", {})
    if not isinstance(permissions, dict):
        raise ConfigError(f"{path}: [permissions] must be a table")
    mode = permissions.get("mode")
    if mode is not None and not isinstance(mode, str):
        raise ConfigError(f"{path}: permissions.mode must be a string")
    if mode is not None and mode not in MODES:
        raise ConfigError(f"{path}: permissions.mode {mode!r} is unknown: use one of {', '.join(MODES)}")
    allow = _strings(permissions.get("allow", []), "permissions.allow", path)
    deny = _strings(permissions.get("deny", []), "permissions.deny", path)
    for where, rules in (("permissions.allow", allow), ("permissions.deny", deny)):
        for rule in rules:
            from chimera.core.permissions.rule import Rule  # (only when there are rules)
            from chimera.core.tool_group import DEFAULT_TOOLS

            try:
                Rule.parse(rule, DEFAULT_TOOLS.names)
            except ConfigError as err:
                raise ConfigError(f"{path}: {where}: {err}") from None
    tree = data.get("tree", {})
    if not isinstance(tree, dict):
        raise ConfigError(f"{path}: [tree] must be a table")
    summarize_left = tree.get("summarize_left", False)
    if not isinstance(summarize_left, bool):
        raise ConfigError(f"{path}: tree.summarize_left must be true or false")
    servers = servers_from_table(data["mcp"], str(path), os.environ) if "mcp" in data else ()
    return Settings(
        permission_mode=mode,
        allow=allow,
        deny=deny,
        summarize_left=summarize_left,
        mcp_servers=servers,
        mcp_search_threshold=search_threshold_from_table(data.get("mcp"), str(path)),
        **_sandbox(data, path),
    )


_TOP_SANDBOX = re.compile(r"""["']?sandbox["']?\s*=""")
_DOTTED_SANDBOX = re.compile(r"""["']?sandbox["']?\s*\.""")
_SANDBOX_HEADER = re.compile(r"""\[\s*["']?sandbox["']?\s*[].]""")


def _sandbox_twice(text: str) -> bool:
    """Whether ``text`` gives the top-level shorthand ``sandbox = …`` and a ``[sandbox]`` table (or a dotted
    ``sandbox.key``) too, which TOML refuses as a key declared twice."""
    top = table = in_tables = False
    for line in text.splitlines():
        stripped = line.lstrip()
        if stripped.startswith("["):
            in_tables = True
            table = table or bool(_SANDBOX_HEADER.match(stripped))
        elif not in_tables:
            top = top or bool(_TOP_SANDBOX.match(stripped))
            table = table or bool(_DOTTED_SANDBOX.match(stripped))
    return top and table


def _sandbox(data: dict[str, Any], path: Path) -> dict[str, Any]:
    """The ``[sandbox]`` table's settings, as ``Settings`` fields; the top-level shorthand ``sandbox = "off"``
    (or ``"workspace"``) is the table's mode alone."""
    table = data.get("sandbox", {})
    if isinstance(table, str):
        if table not in SANDBOX_MODES:
            raise ConfigError(f"{path}: sandbox {table!r} is unknown: use one of {', '.join(SANDBOX_MODES)}")
        table = {"mode": table}
    if not isinstance(table, dict):
        raise ConfigError(f'{path}: sandbox must be "workspace" or "off", or a [sandbox] table: {table!r} is neither')
    mode = table.get("mode")
    if mode is not None and mode not in SANDBOX_MODES:
        raise ConfigError(f"{path}: sandbox.mode {mode!r} is unknown: use one of {', '.join(SANDBOX_MODES)}")
    network = table.get("network", False)
    if not isinstance(network, bool):
        raise ConfigError(f"{path}: sandbox.network must be true or false")
    auto = table.get("auto", False)
    if not isinstance(auto, bool):
        raise ConfigError(f"{path}: sandbox.auto must be true or false")
    found: dict[str, Any] = {"sandbox_mode": mode, "sandbox_network": network, "sandbox_auto": auto}
    for key in ("writable", "hidden"):
        paths = _strings(table.get(key, []), f"sandbox.{key}", path, '["~/.cache/pip"]')
        relative = next((p for p in paths if not p.startswith(("/", "~"))), None)
        if relative is not None:
            raise ConfigError(f"{path}: sandbox.{key}: {relative!r} is relative: write it from / or ~")
        found[f"sandbox_{key}"] = paths
    return found
