"""Provides ``QuestionPanel``: the oldest permission question, in place above the input.

It shows the call (its command, or the change as a diff), why it is asked when it is not a plain
question, the rule an "always" adds, and how many questions wait ("1 of 2"). Its keys are the registry's
(``tui.commands``, scope ``question``): ``y`` once, ``a`` always (it shows the rule kept, and a second ``a``
keeps it), ``e`` always with the rule edited first (kept as written, when it is a rule for the call's tool),
``n`` no, ``d`` no with a reason (typed in one line, sent to the model). It takes keys only while it has the
focus, and it gets the focus only by the person's act (``ctrl+y``, a click): keys meant for the input never
answer it. ``escape`` goes back to the input, the question still waiting. Everything the model wrote is
shown with every character that could steer the terminal escaped.
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.events import Key
from textual.widgets import Input, Static

from chimera.core.difflines import diff_lines, unified_diff
from chimera.core.permissions.kept import always_words
from chimera.core.terminal_text import terminal_safe
from chimera.core.tools.base import describe_call
from chimera.tui.command_views import CommandKeys, command_bindings
from chimera.tui.look import BOLD, look_of
from chimera.tui.state.questions import Question
from chimera.tui.workbench.focus import move_to

__all__ = ["QuestionHost", "QuestionPanel", "always_rule", "rule_text"]

_LINES = ("question-reason", "question-rule")  # the one-line inputs the panel opens: a reason, a rule

PREVIEW_LINES = 8  # lines of a command or a change shown; the rest is counted
DIFF_LINES = 11  # lines of a change's preview shown (its headers and a hunk with its context; the detail holds 12)


class QuestionHost(Protocol):
    """What the panel asks of the workbench."""

    def answer_permission(self, verdict: str, words: str = "") -> bool: ...

    def leave(self) -> None: ...


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def always_rule(question: Question) -> str:
    """What "always" lets run unasked, as the policy remembers it and written as rules are everywhere
    (``always_words``): this exact command; for ``write`` and ``edit`` every edit by either tool, or, asked about
    for a reason (a file inside .git), edits to that file only; for any other tool, its every call."""
    return terminal_safe(always_words(question.name, question.args, one_file=bool(question.reason)), one_line=True)


def rule_text(question: Question) -> str:
    """The rule "always" keeps, written as ``--allow`` takes it, for the person to edit (``e``)."""
    if question.name == "bash":
        return f"bash({' '.join(str(question.args.get('command', '')).split())})"
    if question.name in ("write", "edit"):
        return f"edit({question.args.get('path', '')})" if question.reason else "edit"
    return question.name


class QuestionPanel(CommandKeys, Vertical, can_focus=True):
    """Allow once, always, or deny (with a reason) the oldest call waiting."""

    DEFAULT_CSS = """
    QuestionPanel {
        height: auto;
        max-height: 60%;
        padding: 0 1;
        border-left: thick $warning;
        background: $surface;
        display: none;
    }
    QuestionPanel.-shown { display: block; }
    QuestionPanel:focus { background: $boost; }
    QuestionPanel #question-detail { height: auto; max-height: 12; }
    QuestionPanel #question-keys { color: $text-muted; }
    QuestionPanel #question-reason { height: 3; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        *command_bindings("question"),
        Binding("escape", "leave", "Back to the input", show=False, priority=True),
    ]

    def __init__(self, host: QuestionHost, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.host = host
        self.question: Question | None = None
        self.position = (0, 0)  # "1 of 2"
        self.confirming_always = False  # a was pressed: the rule is shown, a second a keeps it

    @property
    def asking_reason(self) -> bool:
        return bool(self.query("#question-reason"))

    @property
    def editing_rule(self) -> bool:
        return bool(self.query("#question-rule"))

    def _close_lines(self) -> None:
        for name in _LINES:
            for line in self.query(f"#{name}"):
                line.remove()

    def compose(self) -> ComposeResult:
        yield Static(id="question-title", markup=False)
        yield Static(id="question-detail", markup=False)
        yield Static(id="question-keys", markup=False)

    def show(self, question: Question | None, number: int = 1, waiting: int = 1) -> None:
        """Ask ``question`` (the ``number``-th of ``waiting``); None hides the panel."""
        if question is None or (self.question is not None and question.request_id != self.question.request_id):
            self._close_lines()
            self.confirming_always = False
        if (question, (number, waiting)) == (self.question, self.position) and self.has_class("-shown") == bool(
            question
        ):
            return  # nothing it shows changed: no redraw
        self.question, self.position = question, (number, waiting)
        self.set_class(question is not None, "-shown")
        if question is None:
            return
        look = look_of(self.app.current_theme)
        name = terminal_safe(question.name, one_line=True)
        asked = f"Run {name} again outside the sandbox?" if question.outside_sandbox else f"Allow {name}?"
        title = Text.assemble((asked, BOLD))
        if waiting > 1:
            title.append(f"  ({number} of {waiting})", look["muted"])
        if question.outside_sandbox:
            title.append(f"\n{_capital(terminal_safe(question.reason, one_line=True))}.", look["notice_warning"])
        elif question.reason:
            title.append(f"\nAsked because {terminal_safe(question.reason, one_line=True)}.", look["notice_warning"])
        self.query_one("#question-title", Static).update(title)
        self.query_one("#question-detail", Static).update(self._detail(question))
        self.draw_keys()

    def draw_keys(self) -> None:
        if self.question is None:
            return
        look = look_of(self.app.current_theme)
        rule = Text.assemble(("a adds the rule ", look["muted"]), (always_rule(self.question), BOLD))
        if self.question.outside_sandbox:  # once at most: leaving the sandbox is never kept
            rule = Text("it runs unconfined, this once: nothing is kept", look["muted"])
            keys = Text("y once · n no · d no, why · esc back to the input", look["muted"])
            if self.asking_reason:
                keys = Text("enter refuses and tells the model why · esc goes back", look["muted"])
            elif not self.has_focus:
                keys = Text("ctrl+y to answer (what you type stays in the input)", look["notice_warning"])
            self.query_one("#question-keys", Static).update(Group(rule, keys))
            return
        if self.confirming_always:
            rule = Text.assemble(
                ("Always allow, from now on: ", look["notice_warning"]), (always_rule(self.question), BOLD)
            )
            keys = Text("a again keeps this rule · y allows this call only · esc goes back", look["muted"])
        elif self.asking_reason:
            keys = Text("enter refuses and tells the model why · esc goes back", look["muted"])
        elif self.editing_rule:
            rule = Text("a rule as --allow takes it: tool(pattern), * matches any words", look["muted"])
            keys = Text("enter allows and keeps this rule · esc goes back", look["muted"])
        elif self.has_focus:
            keys = Text("y once · a always… · e edit rule · n no · d no, why · esc back to the input", look["muted"])
        else:
            keys = Text("ctrl+y to answer (what you type stays in the input)", look["notice_warning"])
        self.query_one("#question-keys", Static).update(Group(rule, keys))

    def _detail(self, question: Question) -> RenderableType:
        args: dict[str, Any] = question.args
        look = look_of(self.app.current_theme)

        def shown(key: str) -> str:
            return terminal_safe(str(args.get(key, "")))

        def cut(lines: list[str], most: int = PREVIEW_LINES) -> str:
            more = f"\n… {len(lines) - most} more lines" if len(lines) > most else ""
            return "\n".join(lines[:most]) + more

        from rich.syntax import Syntax  # (with pygments: when a question first shows code, not before)

        if question.name == "bash":
            return Syntax(cut(shown("command").splitlines()), "bash", theme=look.syntax, word_wrap=True)
        if question.preview:  # what the call would do to the file as it is (the core's, at its real lines)
            return Syntax(cut(diff_lines(question.preview), DIFF_LINES), "diff", theme=look.syntax, word_wrap=True)
        if question.name in ("write", "edit"):
            raw = {key: str(args.get(key, "")) for key in ("path", "old", "new", "content")}
            old, new = (raw["old"], raw["new"]) if question.name == "edit" else ("", raw["content"])
            diff = diff_lines(unified_diff(old, new, raw["path"]))
            return Syntax(cut(diff), "diff", theme=look.syntax, word_wrap=True)
        return Text(terminal_safe(describe_call(question.name, args), one_line=True))

    def on_focus(self) -> None:
        self.call_after_refresh(self.draw_keys)  # once the focus is there (has_focus says so)

    def on_blur(self) -> None:
        self.confirming_always = False
        self.draw_keys()

    def confirm_always(self) -> None:
        """``a``: show the rule "always" keeps, for a second ``a`` to keep it (a grant that outlives the call)."""
        self.confirming_always = True
        self.draw_keys()

    def action_leave(self) -> None:
        """``escape``: a rule shown for "always" goes back to the question; else back to the input, the question
        still waiting."""
        if self.confirming_always:
            self.confirming_always = False
            self.draw_keys()
            return
        self.host.leave()

    def ask_reason(self) -> None:
        """``d``: one line for the reason the model reads; enter refuses with it."""
        self._open_line(Input(placeholder="Why not? The model reads this.", id="question-reason"))

    def edit_rule(self) -> None:
        """``e``: the rule "always" keeps, in one line to edit; enter allows the call and keeps the rule."""
        if self.question is not None:
            self._open_line(Input(rule_text(self.question), placeholder="tool(pattern)", id="question-rule"))

    def _open_line(self, line: Input) -> None:
        if self.asking_reason or self.editing_rule:
            return
        self.mount(line, before="#question-keys")
        move_to(line)  # at once: the reason typed in the same instant as the d is the line's
        self.draw_keys()

    def on_input_submitted(self, message: Input.Submitted) -> None:
        if message.input.id == "question-reason":
            message.stop()
            self.host.answer_permission("deny", message.value.strip())
        elif message.input.id == "question-rule" and self.question is not None:
            message.stop()
            written = message.value.strip()
            unchanged = written == rule_text(self.question)  # the rule shown: kept as "always" keeps it
            self.host.answer_permission("always", "" if unchanged else written)  # refused: the line stays

    def on_key(self, event: Key) -> None:
        """``escape`` in the reason or rule line goes back to the question (the run goes on)."""
        if event.key == "escape" and (self.asking_reason or self.editing_rule):
            event.stop()
            event.prevent_default()
            self._close_lines()
            move_to(self)
            self.draw_keys()
