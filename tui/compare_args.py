"""Provides the arguments of ``chimera compare`` and ``chimera diff``, and their handlers.

Declaring them imports nothing heavy: the handlers import the commands' code when they run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chimera.core.option_names import MODES as PERMISSION_MODES
from chimera.core.sandbox import MODES as SANDBOX_MODES

__all__ = ["add_compare_commands", "add_sandbox_options"]


def add_sandbox_options(parser: argparse.ArgumentParser, default: Callable[[object], object]) -> None:
    """``--sandbox`` and ``--allow-network``, as ``chimera``, ``chimera run`` and ``chimera compare`` take them."""
    parser.add_argument(
        "--sandbox",
        choices=SANDBOX_MODES,
        default=default(None),
        help="what commands may touch: workspace (write only there and in a private TMPDIR, no secrets, no "
        "network; the default where the kernel can) or off",
    )
    parser.add_argument(
        "--allow-network",
        action="store_true",
        default=default(False),
        help="let sandboxed commands use the network",
    )
    parser.add_argument(
        "--sandbox-auto",
        action="store_true",
        default=default(False),
        help="in ask and accept-edits modes, run unasked a command only the mode would ask about, confined by "
        "the sandbox (with the network off)",
    )


def add_compare_commands(
    commands: argparse._SubParsersAction[Any],
    session_command: Callable[..., argparse.ArgumentParser],
    positive: Callable[[str], int],
) -> None:
    """Declare ``compare`` and ``diff`` among ``commands`` (``session_command`` makes a command taking ID)."""
    compare = session_command(
        commands,
        "compare",
        "run variants of a task side by side from one point",
        "Run variants of a task (another model, loop or limits) side by side from REF of a session, each on a "
        "scratch copy of REF's files, each recorded as a branch ending in a checkpoint compare-N-LABEL. "
        "The workspace is untouched: `chimera switch ID compare-N-LABEL` brings a variant's files.",
        _compare,
    )
    compare.add_argument("--from", dest="ref", required=True, metavar="REF", help="the node or checkpoint to start at")
    compare.add_argument(
        "--try",
        dest="specs",
        action="append",
        required=True,
        metavar="SPEC",
        help="a variant, key=value[,key=value] with keys loop, model, candidates, reflect-every, max-turns, label",
    )
    compare.add_argument("--task", metavar="TEXT", help="what to do (default: the person's message right after REF)")
    compare.add_argument("--verify", metavar="CMD", help="a command run on each variant's files at its end")
    compare.add_argument("--jobs", type=positive, metavar="N", help="variants at once (default: all, at most 4)")
    compare.add_argument("--json", action="store_true", help="print every event as one JSON object a line")
    # As `chimera run` takes them (given before the command too): the options a refused call's words name.
    compare.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        default=argparse.SUPPRESS,
        help="how the variants' tool calls are approved (default: as the session's runs were): "
        + ", ".join(PERMISSION_MODES),
    )
    compare.add_argument(
        "--allow",
        metavar="RULE",
        action="append",
        default=argparse.SUPPRESS,
        help="let matching tool calls run, beside the session's rules, e.g. 'bash(pytest*)' (repeatable)",
    )
    compare.add_argument(
        "--deny",
        metavar="RULE",
        action="append",
        default=argparse.SUPPRESS,
        help="refuse matching tool calls, beside the session's rules (repeatable)",
    )
    add_sandbox_options(compare, lambda _: argparse.SUPPRESS)
    compare.add_argument(
        "--mcp-config",
        metavar="FILE",
        type=Path,
        default=argparse.SUPPRESS,
        help="tools from the MCP servers FILE lists, a set of them for each variant, started in its copy",
    )
    diff = session_command(
        commands,
        "diff",
        "show the file diff between two points",
        "Show the diff between the files pinned at two points of a session (node ids or checkpoint names).",
        _diff,
    )
    diff.add_argument("first", metavar="A", help="the point to diff from")
    diff.add_argument("second", metavar="B", help="the point to diff to")


def _compare(args: argparse.Namespace) -> int:
    from chimera.tui.compare_command import compare_session

    return compare_session(
        args.session,
        args.ref,
        args.specs,
        task=args.task,
        verify=args.verify,
        jobs=args.jobs,
        permission_mode=args.permission_mode,
        allow=tuple(args.allow),
        deny=tuple(args.deny),
        sandbox=getattr(args, "sandbox", None),
        allow_network=getattr(args, "allow_network", False),
        sandbox_auto=getattr(args, "sandbox_auto", False),
        mcp_config=getattr(args, "mcp_config", None),
        as_json=args.json,
        out=sys.stdout,
    )


def _diff(args: argparse.Namespace) -> int:
    from chimera.tui.compare_command import diff_session

    return diff_session(args.session, args.first, args.second, sys.stdout)
