"""Provides the arguments of ``chimera serve`` and ``given_options``, which hands the workbench's options on.

Declaring them imports nothing heavy: the server's code is imported when the command runs.
"""

from __future__ import annotations

import argparse

__all__ = ["DEFAULT_HOST", "DEFAULT_PORT", "add_serve_options", "given_options"]

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number (0 to 65535)") from None
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{value} is not a port number (0 to 65535)")
    return value


def add_serve_options(parser: argparse.ArgumentParser) -> None:
    """``--host``, ``--port`` and ``--public``, beside the workbench's own options that each tab is started with."""
    parser.add_argument(
        "--host",
        default=DEFAULT_HOST,
        help=f"the address to listen on (default: {DEFAULT_HOST}, this machine only); any other needs --public",
    )
    parser.add_argument(
        "--port", type=_port, default=DEFAULT_PORT, help=f"the port (default: {DEFAULT_PORT}; 0 picks a free one)"
    )
    parser.add_argument(
        "--public",
        action="store_true",
        help="listen on an address other machines can reach: anyone who can reach the port and has the printed "
        "address (its token) can run commands here as you",
    )


def given_options(workbench: argparse.ArgumentParser, args: argparse.Namespace) -> list[str]:
    """The options of ``workbench`` (the ``chimera`` command's parser) that ``args`` holds other than their
    defaults, as words that parser takes back: what each tab's ``chimera`` is started with.

    Every option is handed on, so one added to the workbench reaches the tabs too; an option of a kind this
    does not know how to write raises ``TypeError`` (the tests hold every one of them).
    """
    words: list[str] = []
    for action in workbench._actions:
        if not action.option_strings or action.dest in ("help", "version"):
            continue
        value = getattr(args, action.dest, action.default)
        if value == action.default or value is None:
            continue
        name = action.option_strings[-1]
        if isinstance(action, argparse._StoreTrueAction):
            words.append(name)
        elif isinstance(action, argparse._AppendAction):
            for item in value:
                words += [name, str(item)]
        elif type(action) is argparse._StoreAction:
            words += [name, str(value)]
        else:
            raise TypeError(f"chimera serve cannot hand on {name}: teach given_options its kind")
    return words
