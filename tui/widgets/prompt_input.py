"""Provides ``PromptInput``: where the person types tasks, steering, follow-ups and commands.

While the text is a command being typed (it starts with ``/``), the ``CompletionList`` above the input
offers its completions (from the ``completer`` the app gives): ``up``/``down`` move through them,
``tab`` takes one, ``escape`` puts them away. Otherwise ``tab`` queues the text as the next task. A ``?``
typed into the empty input asks for the help screen instead of being typed. A paste of several lines is
kept whole: the input shows it folded to its first line and a count (``first line… [+12 lines]``), and
:meth:`PromptInput.whole` gives back the whole text to send. ``ctrl+j`` (or ``shift+enter`` where the terminal
tells it from ``enter``) starts a new line, shown as ``⏎``; a ``⏎`` that was pasted or typed as a character
is kept as that character, never taken for a new line.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import ClassVar

from textual import events
from textual.binding import Binding, BindingType
from textual.css.query import NoMatches
from textual.message import Message
from textual.widgets import Input
from textual.widgets.input import Selection

from chimera.core.terminal_text import is_blank, terminal_safe
from chimera.tui.commands import Completion
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.workbench.focus import ACT_KEYS

__all__ = ["PromptInput"]

_WHILE_COMPLETING = {"completion_move", "completion_hide"}
_SHOWN = 40  # characters of a pasted text's first line shown in the input
NEW_LINE = "⏎"  # how a new line typed with ctrl+j shows in the one-line input
_NEW_LINE_KEYS = frozenset({"ctrl+j", "shift+enter"})


def _unshowable(text: str) -> bool:
    """Whether a line holds a character the input cannot show as it is (a control, an escape sequence)."""
    return terminal_safe(text, one_line=True) != text


class PromptInput(Input):
    """A one-line input: ``enter`` sends (steers a run that is going), ``tab`` queues a follow-up or takes the
    completion of a command."""

    reads_pastes: ClassVar[bool] = True  # it folds a paste and shows its controls escaped itself

    DEFAULT_CSS = """
    PromptInput {
        border: tall $border-blurred;
        background: $surface;
    }
    PromptInput:focus {
        border: tall $primary;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("tab", "queue", "Queue", show=False),
        Binding("down", "completion_move(1)", "Next completion", show=False),
        Binding("up", "completion_move(-1)", "Previous completion", show=False),
        Binding("escape", "completion_hide", "Hide completions", show=False),
    ]

    class Queued(Message):
        """The person asked for the text to wait for the run going (``tab``)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class HelpAsked(Message):
        """``?`` in the empty input: the person asked for help, not for a question mark."""

    class Acted(Message):
        """A key that may be an act (enter, ``?``: ``focus.ACT_KEYS``) is handled, and what it asked for was sent
        on before this: the keys the app held behind it can go on."""

    def __init__(self, completer: Callable[[str], list[Completion]] | None = None) -> None:
        super().__init__(
            placeholder="Tell Chimera what to do…  (enter sends · tab queues · ctrl+q quits)",
            id="prompt",
            select_on_focus=False,  # coming back to the input selects nothing: the next key never replaces it
        )
        self.completer = completer
        self.pasted: dict[str, str] = {}  # what the input shows for each multi-line paste -> the whole text
        self._pastes = itertools.count(1)
        self._new_lines = False  # a new line was typed (ctrl+j): each ⏎ in the text is one, but a kept ⏎

    def action_new_line(self) -> None:
        """A new line in the message (sent with the rest on enter)."""
        self.insert_text_at_cursor(NEW_LINE)
        self._new_lines = True

    def _on_paste(self, event: events.Paste) -> None:
        """A paste of one plain line is typed in; one of several lines, or holding what a line cannot show
        (an escape sequence, a ⏎), is kept whole and shown folded: one piece, sent whole."""
        lines = event.text.replace("\r\n", "\n").replace("\r", "\n").split("\n")  # terminals paste lines with \r
        while lines and not lines[-1].strip():
            lines.pop()
        if len(lines) < 2 and NEW_LINE not in event.text and not _unshowable(lines[0] if lines else ""):
            return  # Input's own handler types it
        event.stop()
        event.prevent_default()
        if not lines:
            return
        first = terminal_safe(lines[0].strip(), one_line=True).replace(NEW_LINE, " ")
        shown = f"{first[:_SHOWN]}{'…' if len(first) > _SHOWN else ''}"
        if len(lines) < 2:  # one line holding what a line cannot show, or a ⏎ of its own: kept as written
            self._keep_whole(lines[0], f"{shown} [pasted]")
            return
        self._keep_whole("\n".join(lines), f"{shown} [+{len(lines) - 1} lines]")

    def _keep_whole(self, text: str, fold: str) -> None:
        """Show ``fold`` in the input for ``text``, which is sent whole."""
        self.insert_text_at_cursor(self._folded(text, fold))

    def _folded(self, text: str, fold: str) -> str:
        """``fold`` made unique (the same paste twice: each its own), standing for ``text`` from now on."""
        base = fold.removesuffix("]")
        while fold in self.pasted or fold in self.value:
            fold = f"{base} #{next(self._pastes)}]"
        self.pasted[fold] = text
        return fold

    def put_back(self, items: list[tuple[str, str]]) -> None:
        """Words sent that no run read, back at the start of the input before what is there: each ``(what it
        was, its words)`` one piece marked ``[steering: …]`` or ``[queued: …]``, a new line between them, so
        they can be sent again as they were, or removed one at a time."""
        if not items:
            return
        pieces = []
        for mark, text in items:
            first = terminal_safe(text.strip().split("\n", 1)[0], one_line=True)
            more = "…" if len(first) > _SHOWN or "\n" in text.strip() else ""
            pieces.append(self._folded(text, f"[{mark}: {first[:_SHOWN]}{more}]"))
        if self.value:
            pieces.append(self.value)
        self.value = NEW_LINE.join(pieces)
        self._new_lines = True
        self.cursor_position = len(self.value)

    def _folds(self) -> list[tuple[int, int]]:
        """Where each folded paste sits in the text: (start, end), in order."""
        spans = []
        for fold in self.pasted:
            at = self.value.find(fold)
            if at >= 0:
                spans.append((at, at + len(fold)))
        return sorted(spans)

    def replace(self, text: str, start: int, end: int) -> None:
        """Every change of the text goes through here: one that touches a folded paste takes all of it (a
        backspace after it deletes the whole paste, never one character of its marker), and words typed
        inside a marker go after it."""
        start, end = sorted((start, end))
        for first, last in self._folds():
            if start == end and first < start < last:  # typing inside: after the marker instead
                start = end = last
            elif start < last and end > first:  # a deletion or a replacement that reaches into it
                start, end = min(start, first), max(end, last)
        super().replace(text, start, end)
        for fold in [fold for fold in self.pasted if fold not in self.value]:  # deleted: nothing of it is sent
            del self.pasted[fold]

    def validate_selection(self, selection: Selection) -> Selection:
        """The cursor never stops inside a folded paste's marker: it steps over it, the way it was going."""
        selection = super().validate_selection(selection)
        before = self.selection.end
        start, end = selection
        for first, last in self._folds():
            if first < end < last:
                end = last if end > before else first
            if first < start < last:
                start = last if start > before else first
        return Selection(start, end)

    def whole(self, text: str) -> str:
        """``text`` as typed, each folded paste in it given back whole and each ⏎ typed as a new line one
        (what is sent)."""
        if not self.pasted and not self._new_lines:
            return text
        parts = sorted(self.pasted, key=len, reverse=True) + ([NEW_LINE] if self._new_lines else [])
        folds = re.compile("|".join(map(re.escape, parts)))
        return folds.sub(lambda m: self.pasted.get(m.group(), "\n"), text)

    def take_sent(self, sent: str) -> None:
        """``sent`` (as enter found it) was sent: it leaves the input; what was typed on behind enter stays."""
        rest = self.value[len(sent) :] if self.value.startswith(sent) else ""
        self.value = rest
        self.cursor_position = len(rest)
        if not rest:
            self.forget_pastes()

    def forget_pastes(self) -> None:
        """The text was sent: the pastes and new lines it held are done with."""
        self.pasted.clear()
        self._new_lines = False

    @property
    def completions(self) -> CompletionList | None:
        try:
            return self.screen.query_one(CompletionList)
        except NoMatches:
            return None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """The completion keys are the list's only while it is shown (else ``escape`` interrupts, as ever)."""
        if action in _WHILE_COMPLETING:
            completions = self.completions
            return completions is not None and completions.shown
        return True

    async def _on_key(self, event: events.Key) -> None:
        """``?`` into the empty input asks for help; any other key goes on to ``Input`` (Textual calls its
        handler after this one unless this one prevents it). After enter or ``?``, ``Acted`` follows what they
        asked for (the app holds the keys typed behind them until then)."""
        try:
            await self._take_key(event)
        finally:
            if event.key in ACT_KEYS:
                self.post_message(self.Acted())

    async def _take_key(self, event: events.Key) -> None:
        if event.character == "?" and not self.value:
            event.stop()
            event.prevent_default()
            self.post_message(self.HelpAsked())
        elif event.key in _NEW_LINE_KEYS:  # here, not by a binding: a binding's action runs after the keys
            event.stop()  # typed on behind it, and the new line would land after them
            event.prevent_default()
            self.action_new_line()
        elif event.key == "enter":  # so too: what is sent is what was typed before enter, not the keys behind it
            event.stop()
            event.prevent_default()
            await self.action_submit()
        elif event.character == NEW_LINE:  # the character itself, typed: kept as written
            event.stop()
            event.prevent_default()
            self._keep_whole(NEW_LINE, f"{NEW_LINE} [typed]")

    def on_input_changed(self, event: Input.Changed) -> None:
        completions = self.completions
        if completions is not None and self.completer is not None:
            completions.show(self.completer(event.value), event.value)

    def action_completion_move(self, step: int) -> None:
        completions = self.completions
        if completions is not None:
            completions.move(step)

    def action_completion_hide(self) -> None:
        completions = self.completions
        if completions is not None:
            completions.hide()

    def take_completion(self, index: int | None = None) -> bool:
        """Put the highlighted completion (or completion ``index``) in the input; False when none is offered."""
        completions = self.completions
        if completions is None or not completions.shown:
            return False
        if index is not None:
            completions.highlighted = index
        chosen = completions.chosen()
        if chosen is None:
            return False
        self.value = chosen.text
        self.cursor_position = len(self.value)
        self.focus()
        return True

    def action_queue(self) -> None:
        if self.take_completion():
            return
        if not is_blank(self.value):
            self.post_message(self.Queued(self.value.strip()))
        else:
            self.screen.focus_next()
