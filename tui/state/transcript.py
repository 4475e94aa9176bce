"""Provides ``Transcript``: the conversation as the workbench shows it, built by one reducer from step events.

No Textual here: the transcript is plain data, so a live run, a resumed
session's history and a replay all feed the same :meth:`Transcript.apply` and
look the same, and tests drive it without a screen.

Entries are what a person sees, in order: their message, steering, the
model's text and thinking, tool calls with their results, plans, compactions,
switches and new branches, reflections, TreeOfThought's candidates (the one taken marked), reminders,
checkpoints, and notices. Each has a fold state (thinking folds by default, a failed call
unfolds) and a ``version`` that changes whenever the entry does, so a view can
cache what it rendered and redo only what changed. What one model request
streams belongs to an *attempt* until ``message_completed`` seals it; a retry
that voids the attempt, or a run that fails before the message completes,
removes the attempt's entries, so a partial message never looks like an answer.

A run that ends leaving its words out of the conversation (``run_finished``'s ``left_out``: the server
refused them, the model declined them, or the run was interrupted before an answer) marks the entries of
those words (the task, steering sent after the last answer) with ``data["left_out"]`` (why) and says so in
a notice, so what the screen shows as the conversation is what the model is sent next.

A running call shows the end of what it prints (``tool_output_delta``), bounded
to ``LIVE_LINES`` lines and ``LIVE_CHARS`` characters, and the whole seconds it
has run, read from the transcript's ``clock`` (a test passes its own) when the
call starts and whenever :meth:`Transcript.tick` is called; its result replaces
both.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from chimera.core.loops.plans import kept_checks, only_the_list
from chimera.core.messages import content_blocks, prompt_text
from chimera.core.tools.base import describe_call, status_of_text
from chimera.core.wording import describe_compaction, describe_ending, describe_left_out, plural
from chimera.tui.state.entry import FOLDS, Entry

if TYPE_CHECKING:  # the events load with the first one (``apply``): the first frame draws none
    from chimera.core.events import RunFinished, StepEvent, ToolCallFinished

__all__ = ["LIVE_CHARS", "LIVE_LINES", "Transcript"]


@cache
def not_shown() -> frozenset[type[StepEvent]]:
    """The events the conversation does not show (the events load with the first one)."""
    from chimera.core.events import (
        ControlRejected,
        PermissionDecided,
        PermissionRequested,
        SteeringReturned,
        TurnStarted,
        UsageReported,
    )

    return frozenset(
        {  # the kinds the conversation does not show (the status line shows turns and usage)
            TurnStarted,
            UsageReported,
            PermissionRequested,  # asked above the input; the call waits marked as asking (when it is on screen)
            PermissionDecided,
            SteeringReturned,  # given back to the input
            ControlRejected,
        }
    )


LIVE_LINES = 200  # lines of a running call's output kept, at most (its end)
LIVE_CHARS = 64 * 1024  # characters of it kept, at most
_ENDED = {  # how a run that did not succeed ends on screen, by its state: its mark and severity
    "interrupted": ("⏹", "warning"),
    "cancelled": ("⊘", "warning"),
    "finished": ("⏹", "info"),  # a replay that reached where its recording stops
    "failed": ("✗", "error"),
}


class Transcript:
    """The entries of one conversation, and the reducer that keeps them in step with events.

    ``clock`` (monotonic seconds) times the running calls.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.entries: list[Entry] = []
        self._attempt: list[Entry] = []  # text and thinking of the request streaming now
        self._calls: dict[str, Entry] = {}  # running tool calls, by call id
        self._plan: Entry | None = None
        self._candidates: list[Entry] = []  # the answers sampled for the turn being chosen
        self._snapshot: str | None = None  # the workspace's last pinned snapshot in this run
        self._said: list[Entry] = []  # the run's words (task, steering) since its last answer

    def __len__(self) -> int:
        return len(self.entries)

    def clear(self) -> None:
        """Nothing shown any more (the conversation is about to be told again, after a switch)."""
        self.entries = []
        self._attempt.clear()
        self._calls.clear()
        self._plan = None
        self._candidates.clear()
        self._said = []

    @property
    def running(self) -> bool:
        """Whether a call is running (its time needs ticking; one waiting for an answer shows no time)."""
        return any(call.status == "running" for call in self._calls.values())

    def tick(self) -> bool:
        """Bring each running call's elapsed seconds up to the clock; True if one changed (only those are touched)."""
        changed = False
        for call in self._calls.values():
            changed = (call.status == "running" and self._elapse(call)) or changed
        return changed

    def apply_all(self, events: Iterable[StepEvent]) -> None:
        for event in events:
            self.apply(event)

    def apply(self, event: StepEvent) -> None:
        """Fold one event into the transcript."""
        from chimera.core.events import (  # (loaded with the first one)
            BranchCreated,
            BranchSummarized,
            CandidateChosen,
            CandidateProposed,
            CheckpointCreated,
            CompactionDone,
            MessageCompleted,
            PermissionDecided,
            PermissionRequested,
            PlanApproved,
            PlanCancelled,
            PlanEdited,
            PlanProposed,
            PlanStepChecked,
            PlanSuggested,
            Reflected,
            ReminderInjected,
            Replanned,
            RetryScheduled,
            RunFinished,
            RunStarted,
            SteeringDelivered,
            SteeringReturned,
            Switched,
            TextDelta,
            ThinkingDelta,
            ToolCallFinished,
            ToolCallStarted,
            ToolOutputDelta,
            ignored,
        )

        match event:
            case TextDelta(text=text):
                self._stream("text", text)
            case ThinkingDelta(text=text):
                self._stream("thinking", text)
            case MessageCompleted(message=message, stop_reason=stop_reason):
                if not self._attempt:  # no deltas came (a log, a replay, an answer requested quietly)
                    self._from_message(message)
                self._seal()
                if stop_reason != "refusal":  # a refusal answers nothing: the words it declined are left out
                    self._said = []
            case RunStarted(task=task, notes=notes):
                self._snapshot = None  # the task's own pin is where the run starts from, not news
                self._said = [self._add(Entry("user", task if isinstance(task, str) else prompt_text(task)))]
                for note in notes:
                    self._add(Entry("notice", note, severity="warning"))
            case SteeringDelivered(text=text):
                self._seal()
                self._said.append(self._add(Entry("steering", text)))
            case SteeringReturned(text=text):
                self._add(
                    Entry("notice", f"↩ not delivered, the run ended before reading it: {text}", severity="warning")
                )
            case RetryScheduled(reason="max_tokens"):
                self._seal()
                self._add(Entry("notice", "↻ the answer hit the output limit; continuing", severity="warning"))
            case RetryScheduled(reason=reason, attempt=attempt, wait_s=wait):
                self._discard()
                self._add(Entry("notice", f"↻ {reason}: retry {attempt} in {wait:.1f}s", severity="warning"))
            case ToolCallStarted(call_id=call_id, name=name, args=args):
                self._seal()
                call = Entry("tool", name=name, args=dict(args), status="running", folded=True, started=self.clock())
                self._calls[call_id] = self._add(call)
            case ToolOutputDelta(call_id=call_id, text=text, skipped=skipped):
                self._live(call_id, text, skipped)
            case PermissionRequested(call_id=call_id) if call_id in self._calls:
                call = self._calls[call_id]
                call.status = "asking"  # it waits for the person's answer: it has not started to run
                call.touch()
            case PermissionDecided(call_id=call_id) if call_id in self._calls:
                call = self._calls[call_id]
                call.status, call.started = "running", self.clock()  # waiting for the person was not run time
                call.elapsed = 0
                call.touch()
            case ToolCallFinished():
                self._finish_call(event)
            case PlanSuggested(reason=reason):
                self._add(Entry("notice", f"Tip: {reason}.", severity="info"))
            case PlanProposed(steps=steps) | PlanEdited(steps=steps) | Replanned(steps=steps):
                if not isinstance(event, PlanEdited):  # the model's: its answer may be the same list in words
                    self._drop_plan_words(steps)
                checks = self._kept_checks(steps) if isinstance(event, Replanned) else []
                checks += [None] * (len(steps) - len(checks))
                self._plan = self._add(Entry("plan", steps=list(steps), checks=checks))
            case PlanApproved():
                pass  # the proposed plan stands as it is shown
            case PlanCancelled():
                pass  # the run's end says it, with why ("⊘ the plan was cancelled: …"): said once
            case PlanStepChecked(index=index, passed=passed, by=by, detail=detail):
                if passed and by == "model":  # the model's "DONE" says what the step's tick says
                    self._drop_last_text(detail)
                self._check_step(index, passed)
            case CompactionDone(summary=summary, reason=reason, tokens_before=before, tokens_after=after):
                line = describe_compaction(reason, before, after)
                self._add(Entry("compaction", summary, folded=True, name=f"⇣ {line}"))
            case BranchSummarized(summary=summary, messages=count):
                of = f" · {plural(count, 'message')}" if count else ""
                self._add(Entry("compaction", summary, folded=True, name=f"⑂ the branch left behind, summarized{of}"))
            case Switched(to_node=node, changed_paths=changed):
                files = plural(len(changed), "file") + " brought back" if changed else "no file changed"
                self._add(Entry("switch", f"⇄ switched to {node}: {files}"))
            case BranchCreated():
                self._add(Entry("switch", "⑂ this task starts a new branch; the one it leaves is kept (chimera tree)"))
            case RunFinished():
                self._finish_run(event)
            case Reflected(text=text):
                self._add(Entry("reflection", text.strip(), folded=True))
            case ReminderInjected(text=text):
                self._add(Entry("reminder", text.strip(), folded=True))
            case CheckpointCreated(label=label, snapshot=snapshot):
                self._checkpoint(label, snapshot)
            case CandidateProposed(index=index, message=message, stop_reason=stop):
                self._propose(index, message, stop)
            case CandidateChosen(index=index, scores=scores, reason=reason):
                self._choose(index, scores, reason)
            case _:
                ignored(event, not_shown())

    # --- the reducer's steps ----------------------------------------------------------

    def _add(self, entry: Entry) -> Entry:
        self.entries.append(entry)
        return entry

    def _stream(self, kind: str, text: str) -> None:
        last = self._attempt[-1] if self._attempt else None
        if last is None or last.kind != kind:
            last = self._add(Entry(kind, streaming=True, folded=kind == "thinking"))
            self._attempt.append(last)
        last.text += text
        last.touch()

    def _from_message(self, message: dict[str, Any]) -> None:
        for block in content_blocks(message.get("content")):
            if block.get("type") == "thinking" and str(block.get("thinking", "")).strip():
                self._stream("thinking", str(block["thinking"]))
            elif block.get("type") == "text" and str(block.get("text", "")).strip():
                self._stream("text", str(block["text"]))

    def _drop_plan_words(self, steps: Sequence[str]) -> None:
        """An answer that is nothing but the plan's checklist (or, for a re-plan, the steps it revised) leaves:
        the plan's entry, just after it, shows the same steps and ticks them off (an answer with words besides
        the list stays)."""
        last = self._last_answer()
        if last is not None and only_the_list(last.text, tuple(steps)):
            self.entries.pop()

    def _kept_checks(self, steps: Sequence[str]) -> list[bool | None]:
        """The ticks a re-plan keeps: those of the steps done before it, which it leaves as they were."""
        plan = self._plan
        return kept_checks(plan.steps, plan.checks, steps) if plan is not None else []

    def _drop_last_text(self, words: str) -> None:
        """The last answer leaves if it is ``words`` and nothing else (a check's verdict the plan shows)."""
        last = self._last_answer()
        if last is not None and words.strip() and last.text.strip() == words.strip():
            self.entries.pop()

    def _last_answer(self) -> Entry | None:
        """The last entry when it is a finished answer."""
        last = self.entries[-1] if self.entries else None
        return last if last is not None and last.kind == "text" and not last.streaming else None

    def _seal(self) -> None:
        for entry in self._attempt:
            entry.streaming = False
            entry.touch()
        self._attempt.clear()

    def _cut_off(self) -> None:
        """The answer streaming when the person interrupted: kept on screen, marked as cut off (the session
        never keeps a partial answer, so the model never sees it)."""
        for entry in self._attempt:
            entry.streaming = False
            entry.data["cut_off"] = True
            entry.touch()
        self._attempt.clear()

    def _discard(self) -> None:
        """The attempt is void: its entries leave the transcript."""
        if self._attempt:
            void = {id(entry) for entry in self._attempt}
            self.entries = [entry for entry in self.entries if id(entry) not in void]
            self._attempt.clear()

    def _live(self, call_id: str, text: str, skipped: int) -> None:
        """More output of a running call: kept at its end, within LIVE_LINES and LIVE_CHARS."""
        call = self._calls.get(call_id)
        if call is None:  # a call already over (or never seen): its result is what counts
            return
        output = call.output
        if skipped:
            gap = f"[… {skipped:,} characters not shown …]\n"
            output += gap if not output or output.endswith("\n") else "\n" + gap
        output = (output + text)[-LIVE_CHARS:]
        if output.count("\n") > LIVE_LINES:
            output = output[_nth_from_end(output, "\n", LIVE_LINES + 1) + 1 :]
        call.output = output
        self._elapse(call)
        call.touch()

    def _elapse(self, call: Entry) -> bool:
        """Set ``call.elapsed`` from the clock; True (and the call touched) when it changed."""
        seconds = max(0, int(self.clock() - call.started)) if call.started is not None else 0
        if seconds == call.elapsed:
            return False
        call.elapsed = seconds
        call.touch()
        return True

    def _finish_call(self, event: ToolCallFinished) -> None:
        call = self._calls.pop(event.call_id, None)
        if call is None:  # its start was not seen (a history that begins mid-batch): show it whole
            call = self._add(Entry("tool", name=event.name, args=dict(event.args), folded=True))
        call.ended = event.status or status_of_text(event.output, event.is_error)  # a log from before statuses
        call.status = {"ok": "done", "cancelled": "cancelled"}.get(call.ended, "failed")
        call.output = event.output
        call.duration_ms = event.duration_ms if event.duration_ms >= 0 else None  # below 0: not known
        call.data = dict(event.data)
        # A failure is what the person needs to see, and an edit's diff what it did: both open. One the
        # person opened while it ran (to watch its output) stays open.
        shut = call.status != "failed" and not (call.status == "done" and call.data.get("diff"))
        call.folded = call.folded and shut
        call.touch()

    def _check_step(self, index: int, passed: bool) -> None:
        plan = self._plan
        if plan is not None and 0 <= index < len(plan.checks):
            plan.checks[index] = passed
            plan.touch()

    def _finish_run(self, event: RunFinished) -> None:
        if event.success:
            self._seal()
            done = f"✓ done in {plural(event.steps, 'turn')} · ${event.cost:.4f}"
            self._add(Entry("notice", done, severity="success"))
        else:
            ending = describe_ending(event.success, event.reason, event.error)
            if ending.state == "interrupted":  # what streamed before the stop stays on screen, marked as not kept
                self._cut_off()
            else:
                self._discard()
            mark, severity = _ENDED[ending.state]  # interrupted, cancelled: the person's own doing, not a failure
            self._add(Entry("notice", f"{mark} {ending.line}", severity=severity))
        for call in self._calls.values():  # calls whose end never came: not running any more
            call.status = "cancelled"
            call.touch()
        self._calls.clear()
        said, self._said = self._said, []
        if event.left_out and said:  # not part of the conversation any more: marked, and said so
            for entry in said:
                entry.data["left_out"] = event.left_out
                entry.touch()
            self._add(Entry("notice", f"↷ {describe_left_out(event.left_out)}", severity="warning"))

    def _checkpoint(self, label: str, snapshot: str) -> None:
        """A named checkpoint, or the files pinned after a change of them (a pin that changed nothing,
        such as the one at each task, shows nothing)."""
        if label or (self._snapshot is not None and snapshot != self._snapshot):
            self._add(Entry("checkpoint", snapshot, folded=True, name=label))
        self._snapshot = snapshot

    def _propose(self, index: int, message: dict[str, Any], stop_reason: str) -> None:
        """One TreeOfThought candidate: its words and the calls it would make, folded."""
        self._seal()
        if index == 0:
            self._candidates = []
        lines = []
        for block in content_blocks(message.get("content")):
            if block.get("type") == "text" and str(block.get("text", "")).strip():
                lines.append(str(block["text"]).strip())
            elif block.get("type") == "tool_use":
                args = block.get("input")
                name = str(block.get("name", ""))
                lines.append(f"→ {name} {describe_call(name, args if isinstance(args, dict) else {}, 80)}".rstrip())
        data: dict[str, Any] = {"index": index, "stop_reason": stop_reason}
        self._candidates.append(self._add(Entry("candidate", "\n\n".join(lines), folded=True, data=data)))

    def _choose(self, index: int, scores: list[int | None], reason: str) -> None:
        """The candidate taken is marked, each with its score, and the reason shown on the one taken."""
        for candidate in self._candidates:
            at = int(candidate.data["index"])
            candidate.data["score"] = scores[at] if 0 <= at < len(scores) else None
            candidate.data["chosen"] = at == index
            candidate.data["of"] = len(self._candidates)
            if at == index:
                candidate.data["reason"] = reason
            candidate.touch()
        self._candidates = []

    def note(self, text: str, severity: str = "info") -> Entry:
        """A notice of the front end's own (a resumed session, a failure outside any run)."""
        return self._add(Entry("notice", text, severity=severity))

    # --- folding ------------------------------------------------------------------------

    def toggle(self, index: int) -> None:
        """Fold or unfold entry ``index`` (only the kinds in :data:`FOLDS` fold)."""
        entry = self.entries[index]
        if entry.kind in FOLDS:
            entry.folded = not entry.folded
            entry.touch()

    def fold_all(self, folded: bool) -> None:
        for entry in self.entries:
            if entry.kind in FOLDS and entry.folded is not folded:
                entry.folded = folded
                entry.touch()

    def next_failed(self, after: int) -> int | None:
        """The index of the first failed call after ``after`` (wrapping round), or None."""
        count = len(self.entries)
        for step in range(1, count + 1):
            index = (after + step) % count
            if self.entries[index].failed:
                return index
        return None


def _nth_from_end(text: str, char: str, n: int) -> int:
    """The index of the ``n``-th ``char`` counted from the end of ``text`` (``text`` holds at least ``n``)."""
    index = len(text)
    for _ in range(n):
        index = text.rindex(char, 0, index)
    return index
