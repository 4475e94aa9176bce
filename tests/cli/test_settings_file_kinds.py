"""A settings file that is not a regular file (a FIFO, a device, a folder) or is far too big to be settings is
refused at start-up in one line; Chimera never waits on it or reads it for ever."""

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
