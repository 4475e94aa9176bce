"""Provides ``main``, the ``chimera`` command: the workbench, ``chimera run`` for headless runs, ``chimera acp`` for
editors.

The options its commands share are in ``tui.cli_options``. Heavy imports
(Textual, the anthropic SDK) happen only once a command needs them, so
``chimera --help`` answers at once. Bad input gets one line naming the cause
and the fix, and exit code 2; never a traceback.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    from chimera.core.sessions.opening import RunOptions

__all__ = ["main"]

from chimera.core.gc_pause import started
from chimera.tui.cli_options import PICK, choices, common, given_before, limits, plan_options, positive, rules
from chimera.tui.compare_args import add_compare_commands


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line, with the way to get help.

    ``given`` (the workbench's parser: the words after ``chimera``) lets an error caused by an option of
    another command given to the workbench say which command takes it (``option_hints``).
    """

    given: Sequence[str] = ()

    def error(self, message: str) -> NoReturn:
        from chimera.core.terminal_text import terminal_safe  # the message quotes what was typed

        line = f"{self.prog}: {message} (see {self.prog} --help)"
        if self.given:
            from chimera.tui.option_hints import misplaced

            better = misplaced(self, self.given)
            line = f"{self.prog}: {better}" if better else line
        self.exit(2, terminal_safe(line, one_line=True) + "\n")


class _Version(argparse.Action):
    """``--version``: print ``chimera X.Y.Z`` and exit 0 (the version is looked up only when asked for)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: object) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> NoReturn:
        sys.stdout.write(f"chimera {installed_version()}\n")
        parser.exit(0)


def installed_version() -> str:
    """The installed package's version; ``unknown`` when Chimera runs without its package metadata."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("chimera-workbench")
    except PackageNotFoundError:
        return "unknown (not installed as a package: pip install . sets it)"


def build_parser() -> _Parser:
    parser = _Parser(
        prog="chimera",
        description="A terminal workbench for coding agents. With no command, opens the workbench.",
        epilog=(
            "Model: set ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL for a local server that speaks the "
            "Messages API. With neither, Chimera plays an offline demo. State lives in $CHIMERA_HOME."
        ),
    )
    parser.add_argument("--version", action=_Version)
    common(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    run = commands.add_parser("run", help="run a task without the workbench", description="Run a task headless.")
    run.add_argument("task", help="what the agent should do")
    common(run, sub=True)
    run.add_argument("--json", action="store_true", help="print every event as one JSON object a line")
    limits(run)
    run.add_argument(
        "--control",
        choices=["-"],
        help="read JSON lines on stdin while the run goes: steer, follow_up, interrupt, plan, permission answers",
    )
    plan_options(run)
    run.set_defaults(handler=_run)
    acp = commands.add_parser(
        "acp",
        help="be an agent for an editor (the Agent Client Protocol over stdio)",
        description="Speak the Agent Client Protocol (ACP) on stdin and stdout, for an editor or client such as Zed, "
        "Toad or acpx: each session works in the folder the client names, with the client's MCP servers, and the "
        "options below choose how its runs go. Only the protocol is written to stdout; logs go to "
        "$CHIMERA_HOME/logs/acp.log.",
    )
    choices(acp, given_before)  # as for run: an option given before the command stands
    rules(acp, given_before)
    limits(acp)
    plan_options(acp)
    acp.set_defaults(handler=_acp)

    sessions = commands.add_parser("sessions", help="list sessions", description="List the sessions, newest first.")
    sessions.add_argument("--json", action="store_true", help="print one JSON array")
    sessions.set_defaults(handler=_sessions)

    tree = _session_command(commands, "tree", "show a session's tree", "Show a session as a tree.", _tree)
    tree.add_argument("--json", action="store_true", help="print one JSON document")
    switch = _session_command(
        commands,
        "switch",
        "move a session to another point, files included",
        "Move a session to NODE (an id from `chimera tree`, or a checkpoint's name) and restore its files.",
        _switch,
    )
    switch.add_argument("node", metavar="NODE", help="the node or checkpoint name (see `chimera tree ID`)")
    switch.add_argument("--yes", action="store_true", help="do not ask before rewriting files")
    checkpoint = _session_command(
        commands,
        "checkpoint",
        "name a point of a session",
        "Name a node of a session (the leaf by default); at the leaf the files are pinned too.",
        _checkpoint,
    )
    checkpoint.add_argument("label", metavar="NAME", help="the checkpoint's name")
    checkpoint.add_argument("--node", metavar="NODE", help="the node to name (default: the leaf)")
    checkpoint.add_argument("--move", action="store_true", help="move the name here if another node has it")
    replay = _session_command(
        commands,
        "replay",
        "play a session back with no model",
        "Play one branch of a session (its active path, or the path to NODE) back through the loop, run by run, "
        "with the recorded tool results, or re-running the tools on a scratch copy and stopping at the first "
        "divergence. In a terminal it plays in the workbench (p pause/play, s step, 1 2 3 speed, q quit); "
        "with --json, or when its output is not a terminal, it prints the run.",
        _replay,
    )
    replay.add_argument("--json", action="store_true", help="print every event as one JSON object a line")
    replay.add_argument(
        "--rerun-tools",
        action="store_true",
        help="run again the tools that ran when recorded (in a scratch copy, under the recorded permissions) "
        "and compare their results",
    )
    replay.add_argument("--node", metavar="NODE", help="replay the branch that ends at NODE (default: the leaf)")
    replay.add_argument(
        "--paused", action="store_true", help="in the workbench, start paused: s plays one turn, p plays on"
    )
    export = _session_command(
        commands, "export", "write a session as Markdown", "Write a session's active path as Markdown.", _export
    )
    export.add_argument("-o", "--output", type=Path, metavar="FILE", help="write to FILE instead of stdout")
    add_compare_commands(commands, _session_command, positive)
    doctor = commands.add_parser(
        "doctor",
        help="say what this machine lets Chimera do",
        description="Say which sandbox commands run in, and what it cannot enforce here.",
    )
    doctor.set_defaults(handler=_doctor)
    from chimera.tui.serve.options import add_serve_options  # (light: the server is imported when it runs)

    serve = commands.add_parser(
        "serve",
        help="open the workbench in a browser",
        description="Serve the workbench to a browser: each tab is a workbench of its own, started with the "
        "options given here. The address printed holds a token that every page and tab needs.",
    )
    add_serve_options(serve)
    common(serve, sub=True)
    serve.set_defaults(handler=_serve)
    return parser


def _session_command(
    commands: argparse._SubParsersAction[_Parser],
    name: str,
    summary: str,
    description: str,
    handler: Callable[[argparse.Namespace], int],
) -> argparse.ArgumentParser:
    """A subcommand that works on one session: it takes the session's id first."""
    parser = commands.add_parser(name, help=summary, description=description)
    parser.add_argument("session", metavar="ID", help="the session (see `chimera sessions`)")
    parser.set_defaults(handler=handler)
    return parser


READER_GONE = 128 + 13  # what a shell reports for a command ended by SIGPIPE, as `seq 9999 | head -1` is


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``chimera`` command; return its exit code.

    When the reader of stdout goes away (``chimera tree ID | head -1``) the command
    ends quietly with READER_GONE (141), like the shell's own tools.
    """
    try:
        try:
            return _dispatch(argv)
        finally:
            sys.stdout.flush()  # here, not at exit, so that a reader gone by now is noticed
    except BrokenPipeError:
        return _reader_gone()


def _dispatch(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    parser.given = list(sys.argv[1:] if argv is None else argv)
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = getattr(args, "handler", _workbench)
    if handler is not _workbench:  # the workbench lets the collector run again after its first frame
        started()
    try:
        return handler(args)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        raise
    except Exception as err:
        return _report(err)


def _reader_gone() -> int:
    """Point stdout at /dev/null, so nothing left in its buffer fails again at exit; return READER_GONE."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (a test's stream)
        pass
    finally:
        os.close(devnull)
    return READER_GONE


def _report(err: Exception) -> int:
    """One line on stderr for an error a person can act on, and its exit code; anything else is a bug.

    The line names what it is about (a path, a session, the server's words) with every
    character that could steer a terminal shown as an escape.
    """
    from chimera.core.credentials import values
    from chimera.core.errors import ChimeraError, SessionError
    from chimera.core.redact import Redactor
    from chimera.core.terminal_text import terminal_safe

    def say(line: str) -> None:
        print(terminal_safe(Redactor(values()).mask(line), one_line=True), file=sys.stderr)

    if isinstance(err, ChimeraError):
        say(f"chimera: {err}")
        return 1 if isinstance(err, SessionError) else 2
    if isinstance(err, OSError):  # the machine said no (a full disk, a file too large)
        where = f" ({err.filename})" if err.filename else ""
        say(f"chimera: {err.strerror or err}{where}: free space or fix permissions, then try again")
        return 1
    raise err


def _sessions(args: argparse.Namespace) -> int:
    from chimera.tui.session_commands import print_sessions

    return print_sessions(sys.stdout, as_json=args.json)


def _tree(args: argparse.Namespace) -> int:
    from chimera.tui.tree_command import print_tree

    return print_tree(args.session, sys.stdout, as_json=args.json)


def _switch(args: argparse.Namespace) -> int:
    from chimera.tui.session_commands import switch_session

    return switch_session(args.session, args.node, sys.stdout, yes=args.yes, ask=sys.stdin.isatty())


def _checkpoint(args: argparse.Namespace) -> int:
    from chimera.tui.session_commands import label_checkpoint

    return label_checkpoint(args.session, args.label, args.node, sys.stdout, move=args.move)


def _replay(args: argparse.Namespace) -> int:
    if not args.json and sys.stdin.isatty() and sys.stdout.isatty():
        from chimera.core.sessions.playback import check_replayable
        from chimera.tui.replay_app import ReplayApp

        check_replayable(args.session, args.node)  # a typo is one line here, not a screen to quit
        app = ReplayApp(args.session, node=args.node, rerun_tools=args.rerun_tools, paused=args.paused)
        app.run()
        return app.return_code or 0
    import asyncio  # here, not at the top: `chimera tree` and its kin never start an event loop

    from chimera.core.headless import replay_headless

    return asyncio.run(
        replay_headless(args.session, node=args.node, json_lines=args.json, rerun_tools=args.rerun_tools)
    )


def _export(args: argparse.Namespace) -> int:
    from chimera.tui.session_commands import export_session

    return export_session(args.session, args.output, sys.stdout)


def _options(args: argparse.Namespace, *, interactive: bool) -> RunOptions:
    from chimera.core.sessions.opening import RunOptions  # (light: the workbench's first frame waits on it)

    return RunOptions(
        workdir=getattr(args, "workdir", None),
        model=args.model,
        loop=args.loop,
        max_turns=getattr(args, "max_turns", 50),
        reflect_every=getattr(args, "reflect_every", 3),
        candidates=getattr(args, "candidates", 3),
        approve_plan=getattr(args, "approve_plan", False),
        verify=getattr(args, "verify", None),
        permission_mode=args.permission_mode,
        allow=tuple(args.allow),
        deny=tuple(args.deny),
        max_tokens=getattr(args, "max_tokens", None),
        max_cost=getattr(args, "max_cost", None),
        max_time=getattr(args, "max_time", None),
        resume=getattr(args, "resume", None),
        interactive=interactive,
        workdir_from_session=getattr(args, "workdir_from_session", False),
        accept_queued=getattr(args, "accept_queued", False),
        drop_queued=getattr(args, "drop_queued", False),
        sandbox=args.sandbox,
        allow_network=args.allow_network,
        sandbox_auto=args.sandbox_auto,
        mcp_config=args.mcp_config,
    )


def _doctor(args: argparse.Namespace) -> int:
    from chimera.tui.doctor_command import print_doctor

    return print_doctor(sys.stdout)


def _serve(args: argparse.Namespace) -> int:
    from chimera.tui.serve.command import serve

    workbench = argparse.ArgumentParser(add_help=False)
    common(workbench)  # the options each tab's `chimera` is started with, as serve was given them
    return serve(args, workbench)


def _run(args: argparse.Namespace) -> int:
    from chimera.core.headless import run_headless

    options = _options(args, interactive=False)
    control = None
    if args.control == "-":
        control = sys.stdin
        if isinstance(control, io.TextIOWrapper):  # a line that is not UTF-8 is a bad line, not the channel's end
            control.reconfigure(errors="replace")
    import asyncio  # as for a replay

    return asyncio.run(run_headless(args.task, options, json_lines=args.json, control=control))


def _acp(args: argparse.Namespace) -> int:
    from chimera.core.modes.acp import serve_stdio

    return serve_stdio(_options(args, interactive=True), installed_version())


def _workbench(args: argparse.Namespace) -> int:
    """The workbench; with ``--resume`` and no id, the session picker first (escape: nothing opens).

    A session chosen in the workbench (``/sessions``) opens next, when the workbench closes for it.
    """
    options = _options(args, interactive=True)
    if options.resume == PICK:
        started()
        chosen = _pick(options)
        if chosen is None:
            return 0
        options = replace(options, resume=chosen, workdir=None)
    while True:
        code, chosen = _open_workbench(options)
        if chosen is None:
            return code
        options = replace(options, resume=chosen, workdir=None, workdir_from_session=False)
        options = replace(options, accept_queued=False, drop_queued=False)


def _pick(options: RunOptions) -> str | None:
    """The session the person chose in the picker (None: they closed it)."""
    from chimera.core.errors import ConfigError
    from chimera.core.sessions.start import check_can_resume
    from chimera.core.tools.paths import real_path

    check_can_resume()
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise ConfigError(
            "--resume without an id lists the sessions to choose from, which needs a terminal: "
            "pass the session's id (`chimera sessions` lists them)"
        )
    from chimera.tui.picker_app import PickerApp

    here = real_path(options.workdir if options.workdir is not None else Path.cwd())
    return PickerApp(here).run()


def _open_workbench(options: RunOptions) -> tuple[int, str | None]:
    """Run the workbench for ``options``; its exit code, and the session chosen in it to open next.

    A new session opens after the workbench's first frame (an error opening it ends the workbench, and is
    said here); a session resumed opens before, so a damaged one is one line, with nothing drawn."""
    from chimera.tui.app import build_app

    if options.resume and sys.stdin.isatty() and sys.stdout.isatty():
        from chimera.tui.received import confirm_received

        confirmed = confirm_received(options, sys.stdout)
        if confirmed is None:
            return 1, None
        options = confirmed
    app = build_app(options, open_later=not options.resume)
    try:
        app.run()
    finally:
        started()  # the app did after its first frame, unless it ended before
    if app.open_error is not None:
        raise app.open_error
    if app.resume_next is None:  # the workbench closed for good, not to open another session
        hint = app.resume_hint()
        if hint:
            print(hint)
    return app.return_code or 0, app.resume_next
