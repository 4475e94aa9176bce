"""Provides ``Keys``: where the person's keys go before Textual hands them on, where the focus is, and the footer's
keys for it, as the focus model (``tui.workbench.focus``) writes them down.

Keys typed in one instant (one read of the terminal) go where the key before them put the focus. So the keys
typed behind an act (enter or ``?`` in the input, ``o`` on the timeline) are held until the act is done, then
handed on in order (at most ``HOLD_AT_MOST`` later, should nothing say it is done: late, never lost); and a key
that leaves the timeline (escape, or a letter it does not take) moves the focus to the input before the next
key is read. A paste is the person's act too: it brings the app's focus back, and a paste into any field but the
input is made text the field shows as it is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events
from textual.widgets import Input

from chimera.tui.footer_hints import hints
from chimera.tui.outside import paste_as_text
from chimera.tui.widgets.prompt_input import PromptInput
from chimera.tui.workbench.focus import ACT_KEYS, HOLD_AT_MOST, TIMELINE_ACT_KEYS, HeldKeys, place_named

if TYPE_CHECKING:
    from chimera.tui.app import ChimeraApp

__all__ = ["Keys"]


class Keys:
    """The workbench's keys on their way: held behind an act, out of the timeline; and where the focus is."""

    def __init__(self, app: ChimeraApp) -> None:
        self.app = app
        self.held = HeldKeys()  # typed behind an act, until it is done

    def used_up(self, event: events.Event) -> bool:
        """Whether ``event`` (a key or a paste from the terminal) is taken here: held behind an act, or an escape
        that left the timeline. Otherwise Textual hands it on (the focus perhaps moved first)."""
        if not isinstance(event, (events.Key, events.Paste)) or event.is_forwarded:
            return False
        if self.held.keeps(event):
            return True
        app = self.app
        if isinstance(event, events.Paste):
            if not app.app_focus:
                app.app_focus = True
            paste_as_text(event, app.focused)
            return False
        if self._acts(event):
            self.held.hold()  # until the input's or the timeline's Acted (at most HOLD_AT_MOST: none lost)
            hold = self.held.holds
            app.set_timer(HOLD_AT_MOST, lambda: app.call_next(self._let_go, hold))
        return self._left_the_timeline(event)

    def _acts(self, key: events.Key) -> bool:
        """Whether ``key`` may open a screen or move the focus through what has it: enter or ``?`` in the input,
        ``o`` on the timeline."""
        from chimera.tui.widgets.transcript_view import TranscriptView  # (loaded with the first frame)

        focused = self.app.focused
        if isinstance(focused, PromptInput):
            return key.key in ACT_KEYS
        return isinstance(focused, TranscriptView) and key.key in TIMELINE_ACT_KEYS

    async def release(self) -> None:
        """The act is done (a task sent, a screen opened): the keys held behind it go on, in order, to where the
        focus is now."""
        for event in self.held.release():
            await self.app.on_event(event)

    async def _let_go(self, hold: int) -> None:
        """The hold numbered ``hold`` outlived ``HOLD_AT_MOST`` (nothing said it acted): its keys go on."""
        if self.held.holding and self.held.holds == hold:
            await self.release()

    def _left_the_timeline(self, event: events.Key) -> bool:
        """A key that leaves the timeline moves the focus to the input before the next key is handed on, so keys
        typed in the same instant are all the input's (the timeline's own ``Left`` and ``TypedOn`` come after
        them): escape (used up: True), or a printable key that no binding takes (handed on to the input, the
        first of the words typed)."""
        from chimera.tui.widgets.transcript_view import TranscriptView  # (loaded with the first frame)

        app = self.app
        if not isinstance(app.focused, TranscriptView):
            return False
        if event.key == "escape":
            app.prompt.focus()
            return True
        if event.is_printable and event.character and event.key not in app.screen.active_bindings:
            app.prompt.focus()
        return False

    def place(self) -> str:
        """Where the focus is, as the focus model names it."""
        app = self.app
        screen_place = getattr(app.screen, "PLACE", None)  # a screen over the workbench names its place
        if isinstance(screen_place, str):
            return screen_place
        focused = app.focused
        for name in ("question", "plan", "tree"):
            panels = app.query(f"#{name}")
            if focused is not None and any(p is focused or focused in p.walk_children() for p in panels):
                return name
        return "timeline" if focused is not None and focused.id == "conversation" else "input"

    def footer_hints(self) -> list[tuple[str, str]]:
        """The keys of what has the focus: the input's from the command registry, a panel's its own."""
        app = self.app
        place = self.place()
        if place == "input":
            return hints(app.facts())
        if app.focused is not None and app.focused.id == "plan-editor":  # (TextArea: imported when it opens)
            return [("ctrl+s", "use this plan"), ("esc", "keep the edit")]
        if isinstance(app.focused, Input):  # a line a panel asks for: a reason, a rule, a search, a name
            return [("enter", "done"), ("esc", "back")]
        keys = list(place_named(place).keys)
        first = app.state.questions.first
        if place == "question" and first is not None and first.outside_sandbox:  # never "always" out of the sandbox
            keys = [key for key in keys if key[0] not in ("a", "e")]
        return keys
