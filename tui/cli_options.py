"""Provides the ``chimera`` command's options, in the groups its commands share: where and how a session runs
(``common``: the workspace, resuming, the model, strategy and permission mode, the rules and the sandbox), the
run's limits (``limits``), a plan's options (``plan_options``), and the types that check their values. No
command's code is imported here: ``tui.cli`` builds the parser from these groups and runs the commands.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from chimera.core.option_names import LOOPS
from chimera.core.option_names import MODES as PERMISSION_MODES
from chimera.tui.compare_args import add_sandbox_options

__all__ = ["PICK", "choices", "common", "given_before", "limits", "money", "plan_options", "positive", "rules"]


def positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is less than 1")
    return value


def money(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"{text} is not above 0")
    return value


PICK = ""  # --resume with no id: the person picks the session


def common(parser: argparse.ArgumentParser, *, sub: bool = False) -> None:
    # A subcommand's defaults would overwrite options given before it; suppress them there.
    def default(value: object) -> object:
        return argparse.SUPPRESS if sub else value

    parser.add_argument(
        "--workdir",
        type=Path,
        default=default(None),
        help="the workspace folder (default: the current folder)",
    )
    choices(parser, default)
    if sub:
        parser.add_argument("--resume", metavar="ID", default=default(None), help="continue the session ID")
    else:
        parser.add_argument(
            "--resume",
            metavar="ID",
            nargs="?",
            const=PICK,
            default=None,
            help="continue the session ID (its id's beginning is enough); with no ID, choose it from a list",
        )
    received = "with --resume, for a session this Chimera did not record (received, or edited by hand): "
    parser.add_argument(
        "--workdir-from-session",
        action="store_true",
        default=default(False),
        help=received + "let the agent work in the folder it names, not the current folder",
    )
    parser.add_argument(
        "--accept-queued",
        action="store_true",
        default=default(False),
        help=received + "run the steering and follow-up tasks queued in it",
    )
    parser.add_argument(
        "--drop-queued",
        action="store_true",
        default=default(False),
        help=received + "discard the steering and follow-up tasks queued in it",
    )
    rules(parser, default)


def choices(parser: argparse.ArgumentParser, default: Callable[[object], object]) -> None:
    """The model, the strategy and the permission mode."""
    parser.add_argument(
        "--model",
        default=default(None),
        help="the model (default: $CHIMERA_MODEL, else a current Claude Sonnet)",
    )
    parser.add_argument("--loop", choices=LOOPS, default=default("react"), help="the loop strategy (default: react)")
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        default=default(None),
        help="how tool calls are approved: " + ", ".join(PERMISSION_MODES),
    )


def rules(parser: argparse.ArgumentParser, default: Callable[[object], object]) -> None:
    """What tool calls may do: the allow and deny rules, the sandbox, and the MCP servers' tools."""
    parser.add_argument(
        "--allow",
        metavar="RULE",
        action="append",
        default=default([]),
        help="let matching tool calls run without asking, e.g. 'bash(pytest*)' (repeatable)",
    )
    parser.add_argument(
        "--deny", metavar="RULE", action="append", default=default([]), help="refuse matching tool calls (repeatable)"
    )
    add_sandbox_options(parser, default)
    parser.add_argument(
        "--mcp-config",
        metavar="FILE",
        type=Path,
        default=default(None),
        help="tools from the MCP servers FILE lists (the mcpServers JSON of Claude Code's .mcp.json)",
    )


def limits(parser: argparse.ArgumentParser) -> None:
    """How long a run may go, and the strategies' own settings."""
    parser.add_argument(
        "--max-turns", type=positive, default=50, metavar="N", help="stop after N model turns (default: 50)"
    )
    parser.add_argument("--max-tokens", type=positive, metavar="N", help="stop once the run has used N tokens")
    parser.add_argument("--max-cost", type=money, metavar="USD", help="stop once the run has cost this many dollars")
    parser.add_argument("--max-time", type=money, metavar="SECONDS", help="stop after this much wall time")
    parser.add_argument(
        "--reflect-every",
        type=positive,
        default=3,
        metavar="N",
        help="with --loop reflexion: reflect after every N tool calls (default: 3)",
    )
    parser.add_argument(
        "--candidates",
        type=positive,
        default=3,
        metavar="N",
        help="with --loop tot: answers sampled each turn, the best one taken (default: 3)",
    )


def given_before(value: object) -> object:
    """A subcommand's default: none, so the value of an option given before the command stands."""
    return argparse.SUPPRESS


def plan_options(parser: argparse.ArgumentParser) -> None:
    """``--approve-plan`` and ``--verify``."""
    parser.add_argument(
        "--approve-plan", action="store_true", help="with --loop plan: approve the plan as proposed, without asking"
    )
    parser.add_argument(
        "--verify",
        metavar="CMD",
        help="with --loop plan: a command that checks each step (it passes when it exits 0); "
        "with --loop reflexion: its result leads each reflection",
    )
