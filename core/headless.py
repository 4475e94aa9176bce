"""Provides ``run_headless`` and ``replay_headless``: runs without the workbench, for scripts and CI.

With ``json_lines`` every event goes to stdout as one JSON object a line (a
running command's output too, as ``tool_output_delta`` a few times a second;
``tool_call_finished`` still carries the whole result);
otherwise the answer goes to stdout and tool activity to stderr, as
``chimera.core.printer`` lays them out, and the run ends with a line on stderr naming the session it
kept (``kept_session_line``: how to continue it, see its tree, replay it). Every line, the run's closing error
included, is written with the provider's secrets masked, and plain output with
every character that could steer a terminal shown as an escape. Returns the process exit code: 0
when the run succeeds, 1 when it fails (max turns, refusal, interrupted, a
model error), 2 when the setup is wrong (a rejected key, an unknown model, an
unreachable server, a server that does not speak the Messages API: a redirect, a
status the API never sends, a reply that is not HTTP). A reader that goes away raises
BrokenPipeError once the run is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TextIO

from chimera.core import credentials
from chimera.core.bus import EventBus
from chimera.core.demo import DEMO_NOTICE
from chimera.core.errors import CONFIG_KINDS, ConfigError
from chimera.core.printer import Printer, write_line
from chimera.core.redact import Redactor
from chimera.core.sessions.control import Control
from chimera.core.sessions.playback import play_back, report_lines
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.terminal_text import is_blank
from chimera.core.wording import describe_ending

__all__ = ["EMPTY_TASK", "kept_session_line", "replay_headless", "run_headless"]

EMPTY_TASK = 'the task is empty: say what the agent should do, as in chimera run "fix the failing test"'


async def run_headless(
    task: str,
    options: RunOptions,
    *,
    json_lines: bool = False,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
    control: TextIO | None = None,
) -> int:
    """Run ``task`` with ``options``; print as it goes; return the exit code.

    With ``control`` (stdin for ``--control -``), JSON lines read from it steer the
    run, answer its questions, interrupt it and queue follow-ups, each run after the
    one before ends (see ``chimera.core.sessions.control``); the exit code is the
    last run's.

    A blank task (only spaces, line breaks or invisible characters) raises ConfigError before
    anything is opened or sent.

    Ctrl-C (SIGINT) interrupts the run: open tool calls are cancelled, the run
    ends with reason ``interrupted`` and the exit code is 1. A reader that goes
    away (a closed pipe) interrupts it too, and then BrokenPipeError is raised
    once the run is closed, for the command to end quietly.
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    if is_blank(task):  # refused before anything opens: no session, no request
        raise ConfigError(EMPTY_TASK)
    session = start_session(replace(options, interactive=True) if control is not None else options)
    mask = session.redactor.mask
    for warning in session.warnings:
        write_line(err, mask(f"chimera: {warning}"))
    if session.demo:
        err.write(f"chimera: {DEMO_NOTICE}\n")
        write_line(err, f"chimera: demo task: {session.demo_task} (workspace: {session.env.workdir})")
        task = session.demo_task
    printer = Printer(
        out, err, json_lines=json_lines, on_gone=_threadsafe(session.agent.interrupt), redactor=session.redactor
    )
    session.bus.subscribe(printer, name="printer")
    loop = asyncio.get_running_loop()
    channel = Control(session) if control is not None else None
    if channel is not None and control is not None:
        _read_lines(control, loop, channel)
    with _on_sigint(loop, session.agent.interrupt):
        try:
            if session.mcp is not None:  # the servers ready or failed before the first request; failures said
                await session.mcp.ready()
                for notice in session.mcp.notices:
                    write_line(err, mask(f"chimera: {notice}"))
            result = await session.run(task)  # and the follow-ups the channel queues meanwhile
        finally:
            await session.close()
    if printer.gone:
        raise BrokenPipeError("the reader of the output went away")  # the command ends quietly
    if not result.success:
        if result.reason == "interrupted":
            err.write("chimera: the run was interrupted\n")
        else:
            write_line(err, mask(f"chimera: {describe_ending(False, result.reason, result.error).line}"))
    setup = not result.success and result.reason in CONFIG_KINDS  # a setup error is one line: it is that line
    if not (json_lines or setup) and session.store.on_disk and len(session.store.tree):
        write_line(err, kept_session_line(session.id, demo=session.demo))  # --json: every event carries it
    if result.success:
        return 0
    return 2 if setup else 1


def kept_session_line(session_id: str, *, demo: bool = False) -> str:
    """The line a plain run ends with: the session it kept, and the commands that continue it and show it (the
    demo's cannot be continued: that needs a model)."""
    shown = f"see it with chimera tree {session_id} or chimera replay {session_id}"
    if demo:
        return f"chimera: session {session_id} (the demo's): {shown}"
    again = f"chimera --resume {session_id} (or chimera run TASK --resume {session_id})"
    return f"chimera: session {session_id}: continue it with {again}; {shown}"


def _read_lines(stream: TextIO, loop: asyncio.AbstractEventLoop, channel: Control) -> None:
    """Hand each line of ``stream`` to ``channel`` on the event loop, then say it closed; on a thread of its own."""

    def read() -> None:
        try:
            for line in stream:
                loop.call_soon_threadsafe(channel.handle, line)
        except (OSError, ValueError, UnicodeDecodeError):
            pass  # an unreadable channel ends like a closed one
        finally:
            with contextlib.suppress(RuntimeError):  # the loop is already gone: nothing waits any more
                loop.call_soon_threadsafe(channel.close)

    threading.Thread(target=read, name="control", daemon=True).start()


def _threadsafe(action: Callable[[], None]) -> Callable[[], None]:
    """``action`` called on the event loop, from whichever thread asks."""
    loop = asyncio.get_running_loop()

    def call() -> None:
        loop.call_soon_threadsafe(action)

    return call


@contextlib.contextmanager
def _on_sigint(loop: asyncio.AbstractEventLoop, action: Callable[[], None]) -> Iterator[None]:
    try:
        loop.add_signal_handler(signal.SIGINT, action)
    except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGINT)


async def replay_headless(
    session_id: str,
    *,
    node: str | None = None,
    json_lines: bool = False,
    rerun_tools: bool = False,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Replay one branch of a recorded session with no model; print it as a run is printed; 0 when it plays through.

    The branch ends at ``node`` (an id or a checkpoint's name; the leaf when None). With
    ``rerun_tools`` the tools that ran when recorded run again on a scratch copy of the
    workspace as each run found it, and the first result that differs from the recording
    stops the replay with a report (exit 1); calls that may not run again are named.
    The process's credentials are masked in all it prints, as in a live run.
    """
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    redactor = Redactor(credentials.values())

    def say(line: str) -> None:
        write_line(err, redactor.mask(f"chimera: {line}"))

    bus = EventBus()
    printer = Printer(out, err, json_lines=json_lines, on_gone=lambda: None, redactor=redactor)
    bus.subscribe(printer, name="printer")
    try:
        report = await play_back(session_id, bus, node=node, rerun_tools=rerun_tools, warn=say)
    finally:
        await bus.close()
    if printer.gone:
        raise BrokenPipeError("the reader of the output went away")  # the command ends quietly
    for line in report_lines(report, rerun_tools=rerun_tools):
        say(line)
    return 0 if report.success else 1
