"""Provides the CLI runner the tests share: the ``chimera`` command as a subprocess or in this process, and its
one-line error check."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

__all__ = ["assert_one_line_error", "chimera", "chimera_command", "run_chimera"]


def chimera_command() -> list[str]:
    """The installed ``chimera`` script beside this Python, or the launcher module when there is none."""
    script = Path(sys.executable).with_name("chimera")
    return [str(script)] if script.exists() else [sys.executable, "-m", "chimera.tui.launcher"]


def run_chimera(*args: str, env: dict[str, str] | None = None, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``chimera ARGS`` to its end with no stdin, this process's environment plus ``env``; its output as text."""
    return subprocess.run(
        [*chimera_command(), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
        stdin=subprocess.DEVNULL,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2 with one line on stderr, no traceback, holding each of ``needles``."""
    assert proc.returncode == 2, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in lines[0]


def chimera(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, list[str]]:
    """Run ``chimera ARGS`` in this process: its exit code, stdout, and stderr lines (never a traceback)."""
    from chimera.tui.cli import main  # the command's own code, imported by the tests that run it in process

    code = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err.splitlines()
