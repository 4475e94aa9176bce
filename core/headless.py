"""Provides ``run_headless`` and ``replay_headless``: runs without the workbench, for scripts and CI.

With ``json_lines`` every event goes to stdout as one JSON object a line (a
running command's output too, as ``tool_output_delta`` a few times a second;
``tool_call_finished`` still carries the whole result);
otherwise the answer goes to stdout (streamed on a terminal, else each message
once it is complete, so a retried attempt never reaches a file) and tool
activity to stderr. Every line, the run's closing error included, is
written with the provider's secrets masked, and plain output with every
character that could steer a terminal shown as an escape (``terminal_safe``). Returns the process exit code: 0
when the run succeeds, 1 when it fails (max turns, refusal, interrupted, a
model error), 2 when the setup is wrong (a rejected key, an unknown model, an
unreachable server, a server that does not speak the Messages API: a redirect, a
status the API never sends, a reply that is not HTTP). A reader that goes away raises
BrokenPipeError once the run is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
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
from chimera.core.events import (
    CompactionDone,
    MessageCompleted,
    PermissionDecided,
    PlanSuggested,
    RetryScheduled,
    RunFinished,
    RunStarted,
    StepEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
)
from chimera.core.redact import Redactor
from chimera.core.sessions.control import Control
from chimera.core.sessions.playback import play_back, report_lines
from chimera.core.sessions.start import RunOptions, start_session
from chimera.core.terminal_text import is_blank, terminal_safe
from chimera.core.tools.base import describe_call
from chimera.core.wording import describe_compaction, describe_timing, plural

__all__ = ["EMPTY_TASK", "replay_headless", "run_headless"]

EMPTY_TASK = 'the task is empty: say what the agent should do, as in chimera run "fix the failing test"'


class _Printer:
    """Writes a run for its reader; a reader that goes away (a closed pipe) interrupts the run.

    Plain output holds only the text of messages whose attempt succeeded. To a terminal
    the text streams as it comes, and a retry that voids it says so on stderr; to a pipe
    or a file each message's text is written once its ``message_completed`` arrives, so
    a voided attempt never reaches it. A character the output's encoding lacks is
    replaced (in JSON, escaped), never taken for a closed reader; one that could steer
    a terminal is shown as an escape.
    """

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        *,
        json_lines: bool,
        on_gone: Callable[[], None],
        redactor: Redactor | None = None,
    ) -> None:
        self.out = out
        self.err = err
        self.json_lines = json_lines
        self.on_gone = on_gone
        self.redactor = redactor or Redactor()
        self.live = _is_terminal(out)
        self.gone = False
        self._attempt: list[str] = []  # this attempt's text: held back, or (live) already shown

    def __call__(self, event: StepEvent) -> None:
        if self.gone:
            return
        event = self.redactor.mask_fields(event)
        try:
            if self.json_lines:
                if isinstance(event, RunStarted):  # the person reads these even when a program reads the events
                    for note in event.notes:
                        _write(self.err, f"chimera: {note}\n")
                try:
                    self.out.write(event.to_json() + "\n")
                except UnicodeEncodeError:  # an output that cannot carry every character: JSON escapes them
                    self.out.write(json.dumps(event.to_dict(), separators=(",", ":")) + "\n")
                self.out.flush()
            else:
                self._human(event)
        except UnicodeError:
            raise  # not a closed reader: a bug, which the bus reports
        except (OSError, ValueError):  # ValueError: the stream was closed
            self.gone = True
            self.on_gone()

    def _human(self, event: StepEvent) -> None:
        match event:
            case TextDelta(text=text):
                self._attempt.append(text)
                if self.live:
                    _write(self.out, terminal_safe(text))
                    self.out.flush()
            case RunStarted(notes=notes):
                for note in notes:
                    _write(self.err, f"chimera: {note}\n")
            case PlanSuggested(reason=reason):
                _line(self.err, f"chimera: tip: {reason}")
            case CompactionDone(reason=reason, tokens_before=before, tokens_after=after):
                _line(self.err, f"  ⇣ {describe_compaction(reason, before, after)}")
            case MessageCompleted():
                if not self.live:
                    _write(self.out, terminal_safe("".join(self._attempt)))
                    self.out.flush()
                self._attempt.clear()
            case ToolCallStarted(name=name, args=args):
                self.out.write("\n")
                _line(self.err, f"● {name} {describe_call(name, args)}")
            case ToolCallFinished(is_error=is_error, output=output, duration_ms=ms):
                mark = "✗" if is_error else "✓"
                timing = describe_timing(output, ms)
                if timing[0].isdigit():  # it ran to its end: how much it said, and how long it took
                    lines = plural(output.count("\n") + 1, "line")
                    timing = f"{lines} in {timing}"
                self.err.write(f"  {mark} {timing}\n")
            case PermissionDecided(decision="deny", reason=reason):
                _line(self.err, f"  ⊘ {reason}")
            case RetryScheduled(reason=reason, attempt=attempt, wait_s=wait, discards_partial=discards):
                void = ""
                if discards and self._attempt:
                    if self.live:
                        self.out.write("\n")
                        self.out.flush()
                        void = ": the text above is discarded"
                    self._attempt.clear()
                _line(self.err, f"  ↻ retry {attempt} ({reason}) in {wait:.1f}s{void}")
            case RunFinished():
                self._attempt.clear()  # an attempt cut short is not an answer
                self.out.write("\n")
                self.out.flush()
            case _:
                pass
        self.err.flush()


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def _line(stream: TextIO, text: str) -> None:
    """Write ``text`` as one line: nothing in it can steer a terminal or start another line."""
    _write(stream, terminal_safe(text, one_line=True) + "\n")


def _write(stream: TextIO, text: str) -> None:
    """Write ``text``; characters the stream's encoding lacks become its replacement character."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "replace").decode(encoding))


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
        _line(err, mask(f"chimera: {warning}"))
    if session.demo:
        err.write(f"chimera: {DEMO_NOTICE}\n")
        _line(err, f"chimera: demo task: {session.demo_task} (workspace: {session.env.workdir})")
        task = session.demo_task
    printer = _Printer(
        out, err, json_lines=json_lines, on_gone=_threadsafe(session.agent.interrupt), redactor=session.redactor
    )
    session.bus.subscribe(printer, name="printer")
    loop = asyncio.get_running_loop()
    channel = Control(session) if control is not None else None
    if channel is not None and control is not None:
        _read_lines(control, loop, channel)
    with _on_sigint(loop, session.agent.interrupt):
        try:
            result = await session.run(task)  # and the follow-ups the channel queues meanwhile
        finally:
            await session.close()
    if printer.gone:
        raise BrokenPipeError("the reader of the output went away")  # the command ends quietly
    if result.success:
        return 0
    if result.reason == "interrupted":
        err.write("chimera: the run was interrupted\n")
    else:
        _line(err, mask(f"chimera: the run failed ({result.reason}): {result.error}"))
    return 2 if result.reason in CONFIG_KINDS else 1


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
        _line(err, redactor.mask(f"chimera: {line}"))

    bus = EventBus()
    printer = _Printer(out, err, json_lines=json_lines, on_gone=lambda: None, redactor=redactor)
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
