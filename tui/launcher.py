"""Provides ``main``, the ``chimera`` console script: the API key leaves the environment before anything runs.

:func:`chimera.core.credentials.take_from_environment` runs first (it may execute
the command again, without the key in its environment), then the command itself.
An error that escapes as a traceback is printed with every credential masked,
and nothing in it that could steer the terminal.
"""

from __future__ import annotations

import sys
import traceback
from types import TracebackType

__all__ = ["main"]


def main() -> int:
    """Run the ``chimera`` command as the console script does; return its exit code."""
    from chimera.core.gc_pause import pause_until_started

    pause_until_started()  # what starting imports lives as long as the process: the collector waits (cli.py)
    from chimera.core.credentials import take_from_environment

    take_from_environment()
    sys.excepthook = _masked_excepthook
    from chimera.tui.cli import main as run

    return run()


def _masked_excepthook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    from chimera.core.credentials import values
    from chimera.core.redact import Redactor
    from chimera.core.terminal_text import terminal_safe

    text = "".join(traceback.format_exception(kind, value, tb))
    sys.stderr.write(terminal_safe(Redactor(values()).mask(text)))
    sys.stderr.flush()


if __name__ == "__main__":
    sys.exit(main())
