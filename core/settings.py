"""Provides the person's settings file: ``CHIMERA_HOME/config.toml``.

```toml
[permissions]
mode = "ask"                                   # ask | accept-edits | plan | bypass
allow = ["bash(git status*)", "bash(pytest*)"]
deny = ["bash(rm -rf *)"]
```

Flags override the mode and add to the rules. A file that cannot be read is a
ConfigError naming the file and the problem.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from chimera.core.errors import ConfigError
from chimera.core.permissions import MODES, Rule

__all__ = ["CONFIG_NAME", "Settings", "load_settings"]

CONFIG_NAME = "config.toml"


@dataclass(frozen=True, slots=True)
class Settings:
    permission_mode: str | None = None
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def _strings(value: object, where: str, path: Path) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f'{path}: {where} must be a list of strings such as ["bash(git status*)"]')
    return tuple(value)


def load_settings(home: Path) -> Settings:
    """Read ``home/config.toml``; no file means defaults."""
    path = home / CONFIG_NAME
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return Settings()
    except (OSError, UnicodeError) as err:
        raise ConfigError(f"cannot read the settings file {path}: {err}") from None
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"the settings file {path} is not valid TOML ({err}): fix it or remove it") from None
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
            try:
                Rule.parse(rule)
            except ConfigError as err:
                raise ConfigError(f"{path}: {where}: {err}") from None
    return Settings(permission_mode=mode, allow=allow, deny=deny)
