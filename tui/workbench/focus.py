"""Provides the workbench's focus model, written down once: each place the focus can be, what keys it takes,
how the person reaches it and leaves it, and where the focus lands after it acts (:data:`PLACES`);
:func:`move_to`, which moves it at once; :func:`open_screen`, which opens a screen with the focus in it at once;
and :class:`HeldKeys`, the keys typed behind one the input turns into an act, held until it is done.

The rules every place keeps:

- The focus moves only by the person's act: a key named for it (``ctrl+y``, ``ctrl+t``, ``tab``), a click, or
  escape back to the input. Never by a timer, a pause, or a question arriving.
- Printable keys go to what has the focus. A question never takes keys meant for the input: it is answered by
  its keys only once the person moved the focus to it.
- Escape from any panel returns to the input (a line typed in the panel, a search, is left first).
- After a question is answered, a switch, a branch, going back or an adopt, the focus is in the input, where
  the next words are a task.
- Moving the focus into the input never selects, replaces or drops its text.
- Keys typed in the same instant as one that moves the focus (one read of the terminal: a fast typist, a
  script) go where that key put it. So a key that moves the focus is run by the app before it hands on the
  next key (an app binding, or a panel's priority binding taken only while the panel itself has the focus),
  and it moves the focus with :func:`move_to`, at once; work that takes a while (a switch's files) moves the
  focus first and is waited for by what comes next (a task waits for the switch). A screen a command opens
  (the picker, the MCP servers, the help, a comparison, the output viewer) is opened with :func:`open_screen`,
  its focus set before the next key is handed on; and a key the input turns into an act (enter sends, ``?``
  asks for the help: :data:`ACT_KEYS`; the timeline's ``o``) holds the keys behind it until the act is done
  (:class:`HeldKeys`), so
  ``/sessions`` and a filter typed in one instant filter the sessions. Should the act never say it is done (an
  enter something else took first), the keys go on after :data:`HOLD_AT_MOST` to where the focus is: late,
  never lost, and the focus not moved by it.

The footer shows the keys of the place that has the focus (:attr:`Place.keys`; the input's come from the
command registry).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from textual import events
    from textual.app import App
    from textual.screen import Screen, ScreenResultCallbackType
    from textual.widget import Widget

__all__ = [
    "ACT_KEYS",
    "FOCUS_KEYS",
    "HOLD_AT_MOST",
    "PLACES",
    "TIMELINE_ACT_KEYS",
    "HeldKeys",
    "Place",
    "key_line",
    "move_to",
    "open_screen",
    "place_named",
]

T = TypeVar("T")

# The app's own bindings that only move the focus (never a command: they act on nothing). Each is the app's, not
# its place's widget's, because a binding the app runs moves the focus before the next key is handed on.
FOCUS_KEYS: dict[str, str] = {"tab": "leave_input"}

# The keys the input may turn into an act that moves the focus (enter sends: a command may open a screen; ``?``
# in the empty input opens the help). The keys typed behind one wait for the act (``HeldKeys``).
ACT_KEYS = frozenset({"enter", "question_mark"})
# The timeline's key that opens a screen (``o``: a call's whole output); the keys behind it wait for it too.
TIMELINE_ACT_KEYS = frozenset({"o"})
HOLD_AT_MOST = 1.0  # seconds: should the input never say it acted, the keys held go on then, none lost


@dataclass(frozen=True, slots=True)
class Place:
    """One place the focus can be."""

    name: str
    takes: str  # what it does with the keys typed while it has the focus
    reached: str  # how the person moves the focus there
    left: str  # how the person leaves it
    after: str  # where the focus lands after it acts
    keys: tuple[tuple[str, str], ...] = ()  # the footer's hints while it has the focus


PLACES: tuple[Place, ...] = (
    Place(
        "input",
        "every printable key, as words: enter sends a task (or steers the run going), tab queues it, ctrl+j a new "
        "line, up/down move through a command's completions",
        "escape from any panel, a click, and after every answer, switch, branch, back or adopt",
        "tab from an empty input (the timeline), ctrl+y (the oldest question), ctrl+t (the tree), a click",
        "stays: a sent task, steering or command empties it; a command that does not run keeps its words",
    ),
    Place(
        "timeline",
        "up/down (k/j) move, enter or space folds, z folds or unfolds all, n the next failed call, o the whole "
        "output; any other printable key goes to the input, with the focus, as the first of the words typed",
        "tab from an empty input, a click",
        "escape or tab (to the input)",
        "stays (o opens the output viewer over it)",
        (
            ("↑↓", "move"),
            ("enter", "fold"),
            ("z", "fold/unfold all"),
            ("n", "next failed"),
            ("o", "output"),
            ("esc", "input"),
        ),
    ),
    Place(
        "question",
        "y allows once, a shows the rule always keeps and a again keeps it, e edits the rule, n refuses, d refuses "
        "saying why; nothing else",
        "ctrl+y, a click on it",
        "escape (to the input: the question waits, unanswered)",
        "the input, once answered",
        (("y", "once"), ("a", "always…"), ("e", "edit rule"), ("n", "no"), ("d", "no, why"), ("esc", "input")),
    ),
    Place(
        "plan",
        "a approves, e edits it (ctrl+s uses the edit, escape keeps it), k asks what to change, c cancels after a "
        "y, / types a command in the input",
        "ctrl+y when the plan is the oldest question, a click on it",
        "escape (to the input: the plan waits, unanswered)",
        "the input, once answered",
        (("a", "approve"), ("e", "edit"), ("k", "keep planning"), ("c", "cancel"), ("esc", "input")),
    ),
    Place(
        "tree",
        "up/down move, space folds, f filters, / searches, enter switches after a y, b branches, c names a "
        "checkpoint, l a label, u goes back",
        "ctrl+t or /tree, a click on it",
        "escape (a search or a question in it first), ctrl+t",
        "the input, after a switch, a branch or going back",
        (("enter", "switch"), ("b", "branch"), ("u", "back"), ("/", "search"), ("esc", "input")),
    ),
    Place(
        "compare",
        "←/→ choose a variant, s stops it, y/n answer its question, d diffs two, enter or a adopts after a y",
        "/compare (a screen of its own)",
        "escape, once the variants have ended",
        "the input, after an adopt or on leaving",
    ),
    Place(
        "output",
        "the arrows, page keys, home and end scroll the whole output of a call",
        "o on a call in the timeline",
        "escape",
        "the timeline, on the call it was opened from",
    ),
    Place(
        "sessions",
        "every printable key filters the sessions (each word in the title, the workspace or the id); up/down and "
        "the page keys move, enter resumes the one chosen",
        "/sessions (a screen over the workbench)",
        "escape (the input as it was)",
        "the input, on leaving; a session chosen opens once this one has closed",
        (("type", "to filter"), ("↑↓", "move"), ("enter", "resume"), ("esc", "close")),
    ),
    Place(
        "mcp",
        "up/down choose a server, r starts it again, d disables or enables it, t starts the servers of a "
        "workspace's .mcp.json; nothing else",
        "/mcp (a screen over the workbench)",
        "escape (the input as it was)",
        "stays (the servers drawn again once an action is done); the input, on leaving",
        (("↑↓", "choose"), ("r", "reconnect"), ("d", "disable or enable"), ("t", "trust .mcp.json"), ("esc", "close")),
    ),
    Place(
        "help",
        "the arrows and page keys scroll the keys and commands that work now; nothing else",
        "?, f1 or /help (a screen over the workbench)",
        "escape (q, ? and f1 too: the input as it was)",
        "the input, on leaving",
        (("escape", "closes"), ("ctrl+p", "finds any command")),
    ),
)

_BY_NAME = {place.name: place for place in PLACES}


def place_named(name: str) -> Place:
    """The place called ``name`` (one of :data:`PLACES`)."""
    return _BY_NAME[name]


def key_line(keys: tuple[tuple[str, str], ...]) -> str:
    """A place's keys as a screen's line of them says them (``↑↓ move · esc close``)."""
    return " · ".join(f"{key} {what}" for key, what in keys)


def move_to(widget: Widget) -> None:
    """The focus on ``widget`` now, before the next key is read: Textual's ``focus()`` moves it a little later,
    and keys typed right after the one that moved it (``ctrl+y`` then ``y``) would land where it was."""
    widget.screen.set_focus(widget)


async def open_screen(app: App[Any], screen: Screen[T], answered: ScreenResultCallbackType[T] | None = None) -> None:
    """Open ``screen`` over ``app`` with the focus in it (on its ``AUTO_FOCUS``, or its first focusable widget)
    before the next key is handed on: Textual draws a pushed screen later, and keys typed in the same instant
    as the one that opened it would go to no widget, or to the screen's own keys. ``answered`` gets what the
    screen is dismissed with."""
    await app.push_screen(screen, answered)  # (mounted: its widgets are there)
    if screen.focused is None:
        first = next((w for w in screen.query(screen.AUTO_FOCUS or "*") if w.focusable), None)
        if first is not None:
            move_to(first)


@dataclass
class HeldKeys:
    """The keys (and pastes) typed behind one the input turns into an act (:data:`ACT_KEYS`): the app holds
    them from that key until the input says it has handled it (and the act it asked for is done), then hands
    them on where the act put the focus (the screen a command opened, or the input again)."""

    holding: bool = False
    kept: list[events.Event] = field(default_factory=list)
    holds: int = 0  # how many holds there were: a late release of an earlier one leaves a later one be

    def hold(self) -> None:
        """Keep the keys from now on, until :meth:`release`."""
        self.holding = True
        self.holds += 1

    def keeps(self, event: events.Event) -> bool:
        """Whether ``event`` waits (it is kept, in order)."""
        if self.holding:
            self.kept.append(event)
        return self.holding

    def release(self) -> list[events.Event]:
        """The keys kept, in the order typed; none is held from now on."""
        kept, self.kept, self.holding = self.kept, [], False
        return kept
