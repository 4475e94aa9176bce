"""Driving the workbench under Textual's Pilot: what the screen shows, the conversation's entries, a task
typed in, a wait for a condition or for the permission question, and the conversation view alone (``Harness``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input

from chimera.themes import DEFAULT_THEME, THEMES
from chimera.tui.app import ChimeraApp
from chimera.tui.state import Entry, Transcript
from chimera.tui.widgets.question_panel import QuestionPanel
from chimera.tui.widgets.transcript_view import TranscriptView

__all__ = [
    "Harness",
    "answering",
    "asked",
    "burst",
    "colour_at",
    "entries",
    "in_palette",
    "pictured",
    "said",
    "screen_text",
    "send",
    "still",
    "toasts",
    "until",
]


def screen_text(app: object) -> str:
    """Everything the screen shows right now, as plain text."""
    return "\n".join(strip.text for strip in app.screen._compositor.render_strips())  # type: ignore[attr-defined]


def colour_at(app: object, needle: str) -> str | None:
    """The colour (``#rrggbb``) the screen draws the first character of ``needle`` in, where it first shows it;
    None when it does not show it, or draws it in no colour of its own."""
    for strip in app.screen._compositor.render_strips():  # type: ignore[attr-defined]
        found = strip.text.find(needle)
        cell = 0
        for segment in strip if found >= 0 else ():
            if cell + len(segment.text) > found:
                colour = segment.style.color if segment.style else None
                return colour.triplet.hex if colour is not None and colour.triplet is not None else None
            cell += len(segment.text)
    return None


def entries(app: object, kind: str) -> list[Entry]:
    """The conversation's entries of ``kind`` (``user``, ``text``, ``tool``, ``notice``…), in order."""
    return [e for e in app.transcript.entries if e.kind == kind]  # type: ignore[attr-defined]


def said(app: object) -> list[str]:
    """What the person said, as the conversation shows it."""
    return [e.text for e in entries(app, "user")]


async def until(pilot: Pilot[int], condition: Callable[[], bool], what: str) -> None:
    """Let the app process messages until ``condition`` holds (bounded, so a failure cannot hang)."""
    for _ in range(2000):
        if condition():
            return
        await pilot.pause(0.005)
    raise AssertionError(f"never happened: {what}")


async def answering(pilot: Pilot[int], app: ChimeraApp, panel: type[Widget] = QuestionPanel) -> None:
    """Wait until a question of ``panel``'s kind is on screen, then move the focus to it as the person does
    (``ctrl+y``: a question never takes the focus by itself)."""
    await until(
        pilot,
        lambda: app.state.questions.first is not None and app.query_one(panel).has_class("-shown"),
        "a question on screen",
    )
    await pilot.press("ctrl+y")
    await until(pilot, lambda: isinstance(app.focused, panel), "the focus on the question")
    await pilot.pause()


async def asked(pilot: Pilot[int], app: ChimeraApp) -> str:
    """Wait until the permission question is on screen, move the focus to it (``ctrl+y``) and wait until its
    keys show; the screen's text."""
    await answering(pilot, app)
    await until(pilot, lambda: "y once" in screen_text(app), "the permission question's keys")
    return screen_text(app)


def burst(app: App[Any], keys: str | list[str]) -> None:
    """Hand ``keys`` to the app all at once, as the terminal's driver does with keys that came in one read (a
    fast typist, ``tmux send-keys`` of a whole string): each is queued before the first is handled, where
    Pilot's ``press`` waits for each to be handled first. A character stands for itself; a longer name is a
    key (``enter``, ``slash``)."""
    from textual import events
    from textual.keys import _character_to_key

    named = {"enter": "\r", "space": " ", "slash": "/", "tab": "\t"}
    for key in keys:
        char = key if len(key) == 1 else named.get(key)
        name = _character_to_key(key) if len(key) == 1 and not key.isalnum() else key
        event = events.Key(name, char)
        event.set_sender(app)
        app._driver.send_message(event)  # type: ignore[union-attr]


async def send(pilot: Pilot[int], task: str) -> None:
    """Click the prompt, type ``task`` and press enter."""
    await pilot.click("#prompt")
    await pilot.press(*task, "enter")


class Harness(App[None]):
    """The conversation view alone, with Chimera's themes, the default one on."""

    def __init__(self, transcript: Transcript) -> None:
        super().__init__()
        self.transcript = transcript

    def compose(self) -> ComposeResult:
        yield TranscriptView(self.transcript, id="transcript")

    def on_mount(self) -> None:
        for theme in THEMES:
            self.register_theme(theme)
        self.theme = DEFAULT_THEME
        view = self.query_one(TranscriptView)
        view.refresh_entries()
        view.focus()


def toasts(app: object) -> str:
    """The notifications on screen (toasts), as one text."""
    return " ".join(str(n.message) for n in app._notifications)  # type: ignore[attr-defined]


async def in_palette(pilot: Pilot[int], app: App[int], query: str, shown: str) -> None:
    """Open the command palette (ctrl+p), type ``query``, wait for the first hit to read ``shown``, and take it."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+p")
    await until(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    await pilot.press(*query)

    def first() -> str:
        hits = app.screen.query_one(CommandList)
        return str(hits.get_option_at_index(0).prompt) if hits.option_count else ""

    await until(pilot, lambda: shown in first(), f"{shown!r} first in the palette")
    await pilot.press("enter")
    await until(pilot, lambda: not isinstance(app.screen, CommandPalette), "the palette to close")


def still(app: ChimeraApp) -> ChimeraApp:
    """The app with its clocks stopped: a running call's time, the run's time and the spinner's frame are the
    same in every picture taken of it."""
    app.state.transcript.clock = lambda: 0.0
    app.state.status.clock = lambda: 0.0
    return app


async def pictured(pilot: Pilot[int], app: ChimeraApp) -> None:
    """Ready for a picture: the session and workspace shown by names that do not change, the cursors not
    blinking, the conversation scrolled to its end (it follows what comes), then one frame more."""
    app.conversation.show_status(session="5e55102d", workspace="~/project")
    for line in app.query(Input):
        line.cursor_blink = False  # a blinking cursor is on or off as the picture is taken: held on
    view = app.query_one("#conversation")
    await until(pilot, lambda: view.scroll_offset.y >= view.max_scroll_y, "the conversation at its end")
    await pilot.pause()
    await until(pilot, lambda: view.scroll_offset.y >= view.max_scroll_y, "the conversation at its end")
