"""A settings file that is not a regular file (a FIFO, a device, a folder), is far too big to be settings, or
nests thousands deep is refused at start-up in one line; Chimera never waits on it or reads it for ever."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_runner import assert_one_line_error, run_chimera


def _start(project: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """`chimera run` as far as it gets, bounded: a start-up that waits on the file never ends by itself."""
    try:
        return run_chimera("run", "hello", "--workdir", str(project), env=env, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("chimera hung reading its settings file")


def test_a_settings_file_that_is_a_fifo_is_refused_not_waited_on(
    model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """config.toml is a FIFO nobody writes to: exit 2, one line naming the file and what to do."""
    os.mkfifo(isolated_env / "config.toml")
    assert_one_line_error(_start(project, model_env), str(isolated_env / "config.toml"), "FIFO", "regular file")


def test_a_settings_file_that_leads_to_a_device_is_refused(
    model_env: dict[str, str], project: Path, isolated_env: Path
) -> None:
    """config.toml is a link to /dev/zero, which never ends: refused in one line, nothing read."""
    (isolated_env / "config.toml").symlink_to("/dev/zero")
    assert_one_line_error(_start(project, model_env), "config.toml", "regular file")


def test_a_settings_file_far_too_big_is_refused(model_env: dict[str, str], project: Path, isolated_env: Path) -> None:
    """A 2 GB (sparse) config.toml is refused by its size in one line, not read into memory."""
    with (isolated_env / "config.toml").open("wb") as fh:
        fh.truncate(2 << 30)
    assert_one_line_error(_start(project, model_env), "config.toml", "too big")


@pytest.mark.parametrize(
    "nested",
    ["allow = " + "[" * 3000 + "]" * 3000, ".".join(["permissions"] * 50_000) + " = 1"],
    ids=["arrays", "dotted-key"],
)
def test_a_settings_file_nested_thousands_deep_is_one_line(
    model_env: dict[str, str], project: Path, isolated_env: Path, nested: str
) -> None:
    """Arrays nested 3,000 deep (tomllib overflows its stack) or a dotted key 50,000 parts long (tomllib takes
    minutes over it) in config.toml: refused at once, in one line naming the file and the line."""
    (isolated_env / "config.toml").write_text(f'[permissions]\nmode = "ask"\n{nested}\n')
    proc = _start(project, model_env)
    assert_one_line_error(proc, f"{isolated_env / 'config.toml'}, line 3, nests more than 32 levels deep")
