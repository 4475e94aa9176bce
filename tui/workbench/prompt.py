"""Provides ``Prompt``: what the person types, and where it goes.

Enter sends what is typed: a command runs (its text leaves the input once it did), and nothing that starts
with a slash reaches the model unless it is a command that sends a task; words go to the model as a task, or
as steering while a run works. ``tab`` queues them as the next task. Words a run never read, and tasks queued
after a run that stopped, come back to the input, each marked for what it was. Moving the focus to the input
never selects, replaces or drops its text. Words sent while the session still opens leave the input and go
once it is open, in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from chimera.core.terminal_text import is_blank
from chimera.core.wording import plural
from chimera.tui.commands import find, is_command, literal, parse, unknown
from chimera.tui.outside import tell
from chimera.tui.widgets.completions import CompletionList
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.widgets.transcript_view import TranscriptView
from chimera.tui.workbench.focus import move_to

if TYPE_CHECKING:
    from chimera.tui.app import ChimeraApp

__all__ = ["DEMO_FOLLOW_UP", "Prompt"]

DEMO_FOLLOW_UP = (
    "The demo only replays its recording. To give Chimera your own tasks, quit (ctrl+q), "
    "set ANTHROPIC_API_KEY (or ANTHROPIC_BASE_URL for a local server), and start it again."
)


class Prompt:
    """The input: tasks, steering, queued tasks and commands, as the person typed them."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app

    @property
    def input(self) -> PromptInput:
        return self.app.query_one(PromptInput)

    def focus(self) -> None:
        """The focus to the input, its text and cursor as they were."""
        move_to(self.input)

    async def submitted(self, value: str) -> None:
        """Enter: a command runs (its text leaves the input when it did); words go to the model, as a task or as
        steering while a run works."""
        app = self.app
        app.query_one(CompletionList).hide()
        if is_blank(value):  # nothing to read in it: never sent, as a task or as steering
            return
        prompt = self.input
        if is_command(value):  # its words as typed, a paste in them whole
            if await app.commands.run(*parse(prompt.whole(value))):
                prompt.take_sent(value)
            return
        text = prompt.whole(literal(value).strip())  # a multi-line paste goes whole
        runs = app.runs
        if runs.running:  # steering: the words go to the run at its next step
            if app.session.steer(text):
                app.query_one(TranscriptView).follow()  # what the run does with it shows at the end
                prompt.take_sent(value)
                tell(app, "Sent: Chimera reads it after the current step.", timeout=3)
            elif runs.compacting:  # a summary between runs: no run to read them
                tell(app, "Chimera is writing a summary: press enter again once it is done.", timeout=4)
            elif app.session.agent.running or runs.end_shown:  # it is over or about to be: the words stay here
                tell(app, "The run is ending: press enter again once it has, to send this as a task.", timeout=4)
            else:
                tell(app, "The run is just starting: send it again in a moment.", severity="warning")
            return
        prompt.take_sent(value)
        if app.session.demo:
            tell(app, DEMO_FOLLOW_UP, title="This is the demo", severity="warning", timeout=10)
            return
        app.query_one(TranscriptView).follow()
        runs.start(text)

    async def sent_before_open(self, whole: str) -> None:
        """What was sent before the session was open (its pastes whole), now that it is: a command runs (given
        back to an empty input if it does not); words go as a task, or as steering if a run works by now (one
        sent meanwhile); the demo's own run says, as ever, that it only replays."""
        app = self.app
        if is_command(whole):
            if not await app.commands.run(*parse(whole)) and not self.input.value:
                self.prefill(whole)
            return
        text = literal(whole).strip()
        if app.session.demo:
            tell(app, DEMO_FOLLOW_UP, title="This is the demo", severity="warning", timeout=10)
        elif not app.runs.running:
            app.query_one(TranscriptView).follow()
            app.runs.start(text)
        elif not app.session.steer(text):  # the run is not ready for it: back in the input, marked
            self.give_back([("steering", text)])

    def queued(self, text: str) -> None:
        """``tab``: the text waits for the run going, then runs as the next task (a command is never queued)."""
        app = self.app
        if is_command(text):
            name, _ = parse(text)
            app.commands.refuse(
                f"/{name} is a command: press enter to run it (only words are queued)." if find(name) else unknown(name)
            )
            return
        if not app.runs.running or app.runs.compacting or app.session.demo:
            tell(app, "Nothing is running: press enter to send it now.", timeout=3)
            return
        prompt = self.input
        app.session.follow_up(prompt.whole(literal(text)))
        app.state.follow_ups = app.session.follow_ups
        prompt.value = ""
        prompt.forget_pastes()
        waiting = len(app.session.follow_ups)
        tell(app, f"Queued: it runs when this run ends ({plural(waiting, 'task')} waiting).", timeout=4)

    def give_back(self, items: list[tuple[str, str]]) -> None:
        """Words that were sent and not read (``(what they were, the words)``: steering, a queued task): back
        in the input, in the order sent, before what is there, each a piece of its own marked for what it was."""
        self.input.put_back(items)

    def take_back(self) -> None:
        """Words the run handed back unread (its ``steering_returned`` events) go back to the input."""
        returned = self.app.state.take_returned()
        if returned:
            self.give_back([("steering", text) for text in returned])
            tell(self.app, "Not delivered: your words are back in the input, marked.", timeout=4)

    def prefill(self, text: str) -> None:
        """Put ``text`` in the input, the cursor at its end, and the focus there."""
        prompt = self.input
        prompt.value = text
        prompt.cursor_position = len(text)
        move_to(prompt)
