"""Provides ``Printer``: a run's events written for the one who reads them, and the line helpers it uses.

With ``json_lines`` every event is one JSON object a line on stdout. Otherwise the
answer goes to stdout and tool activity to stderr, laid out for reading:

* messages are paragraphs one blank line apart, whatever line breaks a message
  begins or ends with, and a message with no words adds nothing;
* on a terminal the text streams as it comes (a retry that voids it says so on
  stderr); to a pipe or a file each message is written once its
  ``message_completed`` arrives, so a voided attempt never reaches it;
* a call's result line sits under its own call line; when calls run together
  (or anything else is said between a call and its result) the result names its
  call (``✓ read a.txt: 3 lines in 0.01s``);
* what a script driving the run (``--control -``) must answer or know is a line
  of its own on stderr: each question with its ``request_id``, each control line
  refused and why, each steering message handed back unread.

Every line is written with the provider's secrets masked, and plain output with
every character that could steer a terminal shown as an escape (``terminal_safe``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import TextIO

from chimera.core import events as ev
from chimera.core.events import (
    BranchSummarized,
    CompactionDone,
    ControlRejected,
    MessageCompleted,
    PermissionDecided,
    PermissionRequested,
    PlanProposed,
    PlanSuggested,
    RetryScheduled,
    RunFinished,
    RunStarted,
    SteeringReturned,
    StepEvent,
    TextDelta,
    ToolCallFinished,
    ToolCallStarted,
    ignored,
)
from chimera.core.messages import joined_text
from chimera.core.redact import Redactor
from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.base import describe_call, status_of_text
from chimera.core.wording import describe_compaction, describe_output, describe_timing, plural

__all__ = ["Printer", "is_terminal", "write_line", "write_text"]

NOT_PRINTED: frozenset[type[ev.StepEvent]] = frozenset(
    {  # what the text printer leaves out (a permission allowed, steering that reached the model: results show)
        ev.BranchCreated,
        ev.CandidateChosen,
        ev.CandidateProposed,
        ev.CheckpointCreated,
        ev.PermissionDecided,
        ev.PlanApproved,
        ev.PlanCancelled,
        ev.PlanEdited,
        ev.PlanStepChecked,
        ev.Reflected,
        ev.ReminderInjected,
        ev.Replanned,
        ev.SteeringDelivered,
        ev.Switched,
        ev.ThinkingDelta,
        ev.ToolOutputDelta,
        ev.TurnStarted,
        ev.UsageReported,
    }
)

_LEADING_BLANK_LINES = re.compile(r"\A(?:[^\S\n]*\n)+")


class Printer:
    """Writes a run for its reader; a reader that goes away (a closed pipe) interrupts the run.

    A character the output's encoding lacks is replaced (in JSON, escaped), never taken for a
    closed reader; one that could steer a terminal is shown as an escape.
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
        self.live = is_terminal(out)
        self.gone = False
        self._attempt: list[str] = []  # this attempt's streamed text
        self._shown = False  # a message's words are on stdout: the next one starts after a blank line
        self._begun = False  # live: this attempt's first words are written, its line is open
        self._held = ""  # live: blanks not written yet (a message's end may be all they are)
        self._calls: dict[str, str] = {}  # the calls running: how each is named on its result line
        self._refused: dict[str, str] = {}  # why the permissions refused a call, said with its end
        self._under = ""  # the call whose line is the last one on stderr: its result needs no name

    def __call__(self, event: StepEvent) -> None:
        if self.gone:
            return
        event = self.redactor.mask_fields(event)
        try:
            if self.json_lines:
                if isinstance(event, RunStarted):  # the person reads these even when a program reads the events
                    for note in event.notes:
                        self._say(f"chimera: {note}")
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
                    self._stream(text)
            case RunStarted(notes=notes):
                for note in notes:
                    self._say(f"chimera: {note}")
            case PlanSuggested(reason=reason):
                self._say(f"chimera: tip: {reason}")
            case CompactionDone(reason=reason, tokens_before=before, tokens_after=after):
                self._say(f"  ⇣ {describe_compaction(reason, before, after)}")
            case BranchSummarized(summary=summary):
                self._say(f"  ⑂ the branch left behind, summarized: {summary}")
            case MessageCompleted(message=message):
                self._complete(joined_text(message))
            case ToolCallStarted(call_id=call_id, name=name, args=args):
                shown = f"{name} {describe_call(name, args)}".strip()
                self._say(f"● {shown}")
                self._calls[call_id] = shown
                self._under = call_id
            case ToolCallFinished(call_id=call_id, is_error=is_error, output=output, duration_ms=ms):
                status = event.status or status_of_text(output, is_error)
                size = describe_output(event.name, output, event.data)
                if event.sandbox == "refused":  # where the sandbox stopped it, as the model read it
                    size += f", refused by the sandbox: {event.data.get('sandbox_refused', '')}".rstrip(": ")
                self._result(call_id, is_error, size, output, ms, status)
            case PermissionDecided(decision="deny", call_id=call_id, reason=reason):
                if call_id in self._calls:  # said with the call's end: refused, not run, and why
                    self._refused[call_id] = reason
                else:
                    self._say(f"  ⊘ {reason}")
            case PermissionRequested(request_id=request_id, name=name, args=args, reason=reason):
                why = f", asked because {reason}" if reason else ""
                self._say(
                    f"  ? {name} {describe_call(name, args)}: waiting for permission "
                    f"(request_id {request_id}{why}): allow, always or deny"
                )
            case PlanProposed(steps=steps, request_id=request_id):
                asked = f", waiting (request_id {request_id}): approve, edit or cancel" if request_id else ""
                self._say(f"  ☰ a plan of {plural(len(steps), 'step')}{asked}")
                for number, step in enumerate(steps, 1):
                    self._say(f"    {number}. {step}")
            case ControlRejected(message=message, line=line):
                self._say(f"chimera: control line refused: {message}" + (f": {line}" if line else ""))
            case SteeringReturned(text=text):
                self._say(f"chimera: not delivered, the run ended before reading it: {text}")
            case RetryScheduled(reason=reason, attempt=attempt, wait_s=wait, discards_partial=discards):
                void = ""
                if discards:
                    if self.live and self._begun:
                        void = ": the text above is discarded"
                    self._void()
                self._say(f"  ↻ retry {attempt} ({reason}) in {wait:.1f}s{void}")
            case RunFinished():
                self._void()  # an attempt cut short is not an answer
            case _:
                ignored(event, NOT_PRINTED)
        self.out.flush()
        self.err.flush()

    # --- the answer on stdout ----------------------------------------------------------------

    def _stream(self, text: str) -> None:
        """Live: write what is certain of this attempt's text; blanks wait until words follow them."""
        held = self._held + text
        if not self._begun:
            held = _LEADING_BLANK_LINES.sub("", held)
            if not held.strip():
                self._held = held
                return
            self._open()
        cut = len(held.rstrip())
        self._held = held[cut:]
        if cut:
            write_text(self.out, terminal_safe(held[:cut]))

    def _complete(self, text: str) -> None:
        """A message is complete: its words end their line (to a pipe, they are written now, whole)."""
        if not self.live or (not self._begun and not self._attempt):  # a pipe, or an answer that never streamed
            words = _LEADING_BLANK_LINES.sub("", text).rstrip()
            if words:
                self._open()
                write_text(self.out, terminal_safe(words))
        if self._begun:
            self.out.write("\n")
            self._shown = True
        self._reset()

    def _open(self) -> None:
        """This message's first words are about to be written: one blank line after the message before."""
        if self._shown:
            self.out.write("\n")
        self._begun = True

    def _void(self) -> None:
        """The attempt is over without its message (a retry voids it, the run ended): close its line."""
        if self.live and self._begun:
            self.out.write("\n")
        self._reset()

    def _reset(self) -> None:
        self._attempt.clear()
        self._begun = False
        self._held = ""

    # --- tool activity on stderr -------------------------------------------------------------

    def _result(self, call_id: str, is_error: bool, size: str, output: str, ms: float, status: str) -> None:
        mark = "✗" if is_error else "✓"
        timing = describe_timing(status, ms)
        refused = self._refused.pop(call_id, "")
        if timing[0].isdigit():  # it ran to its end: how much it said (``describe_output``), and how long it took
            timing = f"{size} in {timing}"
        elif status in ("refused", "declined"):  # it never ran: why not, in the words the model read
            mark = "⊘"
            why = refused if status == "refused" and refused else output.removeprefix("Error: ").strip()
            timing += f": {why}"
        together = len(self._calls) > 1  # another call is at work too: its result may come next, so name it
        shown = self._calls.pop(call_id, "")
        named = (self._under != call_id or together) and shown
        self._say(f"  {mark} {shown}: {timing}" if named else f"  {mark} {timing}")

    def _say(self, line: str) -> None:
        """One line on stderr; after it, no call's line is the last one there."""
        write_line(self.err, line)
        self._under = ""


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (OSError, ValueError):
        return False


def write_line(stream: TextIO, text: str) -> None:
    """Write ``text`` as one line: nothing in it can steer a terminal or start another line."""
    write_text(stream, terminal_safe(text, one_line=True) + "\n")


def write_text(stream: TextIO, text: str) -> None:
    """Write ``text``; characters the stream's encoding lacks become its replacement character."""
    try:
        stream.write(text)
    except UnicodeEncodeError:
        encoding = getattr(stream, "encoding", None) or "ascii"
        stream.write(text.encode(encoding, "replace").decode(encoding))
