"""Provides the CLI runner the tests share: the ``chimera`` command as a subprocess or in this process, and its
one-line error check.

``run_chimera`` starts the real command (a new interpreter, the launcher, the process boundary); ``run_here``
runs the same ``main`` in this process and answers the same way, for the many steps of a scenario whose
subject is not the process itself (each costs ~0.5 s less). Each user-facing command keeps an end-to-end
test through ``run_chimera``.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import io
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TextIO

import pytest

__all__ = ["assert_one_line_error", "chimera", "chimera_command", "run_chimera", "run_here"]


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


def run_here(
    *args: str, env: dict[str, str] | None = None, timeout: float | None = None
) -> subprocess.CompletedProcess[str]:
    """``run_chimera`` in this process: ``main(ARGS)`` with this environment plus ``env``, stdin empty and not a
    terminal, stdout and stderr captured (neither a terminal); everything is put back afterwards. ``timeout`` is
    taken for ``run_chimera``'s callers: here the test's own timeout bounds the command."""
    from chimera.tui.cli import main  # the command's own code, imported by the tests that run it in process

    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", newline="")
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", newline="")
    with open(os.devnull) as stdin, pytest.MonkeyPatch.context() as patch:
        for name, value in (env or {}).items():
            patch.setenv(name, value)
        patch.setattr(tempfile, "tempdir", None)  # found afresh from TMPDIR, as a new process would
        patch.setattr(sys, "stdin", stdin)
        patch.setattr(sys, "stdout", out)
        patch.setattr(sys, "stderr", err)
        try:
            code = _in_a_thread_if_a_loop_runs(main, list(args))
        except SystemExit as ended:  # argparse's usage errors end the command so: exit as the process would
            code = _exit_code(ended, err)
        out.flush()
        err.flush()
    return subprocess.CompletedProcess(["chimera", *args], code, _text(out_bytes), _text(err_bytes))


def _in_a_thread_if_a_loop_runs(main: Callable[[list[str]], int], argv: list[str]) -> int:
    """``main(argv)``; from a test whose event loop runs here, on a thread of its own (the command starts its
    own loop), the test's loop waiting for it as it would for a child process."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return main(argv)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(main, argv).result()


def _exit_code(ended: SystemExit, err: TextIO) -> int:
    """The exit status a process ending with ``ended`` has (a message that is not a number goes to stderr)."""
    if ended.code is None or isinstance(ended.code, int):
        return ended.code or 0
    err.write(f"{ended.code}\n")
    return 1


def _text(written: io.BytesIO) -> str:
    """The bytes written, decoded as ``subprocess.run(text=True)`` would (universal newlines)."""
    return written.getvalue().decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


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
