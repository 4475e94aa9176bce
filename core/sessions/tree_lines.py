"""Provides ``TreeLines``: a session's tree as the lines a person reads, one a node that matters.

A node *matters* when it is a person's message (a prompt or steering), an answer with words (an
assistant message that only calls tools, and the results of those calls, fold into the turn), a
compaction, a named node (a checkpoint or a label), a branch point, a root or the leaf. A line shows
the connectors that join it to its branch point (``├─``, ``└─``, ``│``), whether it is on the active
path (the root to the leaf) and is the leaf, who spoke, the first line of its text (a plan run's plan and
its steps' verdicts as the plan shows them: ``[plan] ☐ …``, ``☑ step 1: …``), its names and its age. At
each branch point the active branch comes first; several roots are branches of the start.

A line draws at most :data:`SHOWN_LEVELS` levels of connectors: one nested deeper draws its innermost
levels after ``«N»``, the number of outer levels left out (N grows in steps of :data:`LEVEL_STEP`, so
the lines of one stretch of a deep branch stay aligned). A line's width is bounded, never its depth,
and laying out a tree costs the same for each line however deep the branches nest: each level's
connectors are its parent level's drawing (at most that wide) and one piece more (:class:`_Gutter`),
never a string as long as the depth.

The walk that lays the lines out never loops and never trusts the tree: a node is visited once, so a
cycle, a repeated id or a parent that is missing leaves nodes unreachable from the start, and
:attr:`TreeLines.notice` says so in one line. What a line says (who, text) is read from the node's
message only when the line is drawn, searched or tested for being shown, each node read once.

Folding a line hides the lines below it (its turn's continuation and its branches); :meth:`visible`
lists the lines shown under a filter (all, the person's turns, named) and the folds. No Textual here.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from chimera.core.sessions.reading import (
    Answer,
    Carried,
    Reader,
    Reading,
    Steer,
    Summary,
    Task,
    left_out_of,
    summary,
)
from chimera.core.sessions.tree import SessionTree

__all__ = ["FILTERS", "LEVEL_STEP", "SHOWN_LEVELS", "TreeLine", "TreeLines", "age", "who_spoke"]

FILTERS = ("all", "turns", "named")
"""Which lines show: every one, the person's turns only, named nodes only."""

_LAST, _MIDDLE = "└─ ", "├─ "
_BAR, _SPACE = "│  ", "   "

SHOWN_LEVELS = 16
"""The most levels of connectors a line draws (3 columns each); deeper, the outer ones are counted."""
LEVEL_STEP = 8
"""How many outer levels at a time a deep line leaves out."""


@dataclass(frozen=True, slots=True)
class _Gutter:
    """The connectors left of a line: ``depth`` levels of them, ``drawn`` as the line draws them (every level
    3 columns: ``│``, spaces, or the line's own ``├─``/``└─``; past :data:`SHOWN_LEVELS`, the innermost
    after the count of those left out)."""

    depth: int
    drawn: str

    def inside(self, piece: str) -> _Gutter:
        """These connectors with one more level, ``piece``, inside them."""
        depth, drawn = self.depth + 1, self.drawn
        left_out = _left_out(depth)
        if left_out != _left_out(self.depth):  # the count steps on: keep the levels after it
            levels = drawn.partition("» ")[2] if drawn.startswith("«") else drawn
            drawn = f"«{left_out}» " + levels[len(levels) - 3 * (self.depth - left_out) :]
        return _Gutter(depth, drawn + piece)


def _left_out(depth: int) -> int:
    """How many outer levels a line ``depth`` levels in leaves out: none up to :data:`SHOWN_LEVELS`, then
    multiples of :data:`LEVEL_STEP`, so that it draws between ``SHOWN_LEVELS - LEVEL_STEP + 1`` and
    ``SHOWN_LEVELS`` of them."""
    return 0 if depth <= SHOWN_LEVELS else ((depth - SHOWN_LEVELS - 1) // LEVEL_STEP + 1) * LEVEL_STEP


_START = _Gutter(0, "")


@dataclass(slots=True)
class TreeLine:
    """One line of the tree: ``node`` and where it sits.

    ``prefix`` is the connectors drawn before it; ``parent`` the index of the line above it in the tree
    (the nearest ancestor that shows; -1: none); ``end`` the index of the last line below it (its own
    index when nothing is below it).
    """

    node: str
    prefix: str
    parent: int
    active: bool
    leaf: bool
    ts: float
    index: int = 0
    end: int = -1

    @property
    def foldable(self) -> bool:
        """Whether lines are below it (folding it hides them)."""
        return self.end > self.index


def who_spoke(reading: Reading) -> str:
    """Who a line is from, in one word: ``you``, ``steering`` (the person, while it worked), ``chimera``,
    ``summary`` (a compaction), ``left`` (the summary of a branch left behind), ``loop`` (the loop's own
    notes), ``tools`` (results) or ``damaged``."""
    match reading:
        case Task():
            return "you"
        case Steer():
            return "steering"
        case Answer():
            return "chimera"
        case Summary():
            return "summary"
        case Carried():
            return "left"
        case _:
            return {"results": "tools", "damaged": "damaged"}.get(reading.part, "loop")


def age(seconds: float) -> str:
    """How long ago, in one short word: ``now``, ``42s``, ``5m``, ``3h``, ``2d``."""
    if seconds < 1:
        return "now"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds)}s"


class TreeLines:
    """The lines of one session's tree, laid out once; their words read when first asked for.

    ``clock`` gives the time now, for ages.
    """

    def __init__(self, tree: SessionTree, *, clock: Callable[[], float] = time.time) -> None:
        self.tree = tree
        self.reader = Reader(tree)
        self.clock = clock
        self.lines: list[TreeLine] = []
        self.notice: str | None = None
        self._at: dict[str, int] = {}
        self._texts: dict[str, str] = {}
        self._lower: dict[str, str] = {}
        self._named = tree.labelled()
        self._last_match: tuple[str, set[int]] = ("", set())
        self._lay_out()

    # --- laying out -----------------------------------------------------------------------

    def _active_path(self) -> set[str]:
        """The ids from the leaf to the root, bounded (a loop ends the walk)."""
        active: set[str] = set()
        current = self.tree.leaf
        while current is not None and current not in active:
            node = self.tree.nodes.get(current)
            if node is None:
                break
            active.add(current)
            current = node.parent_id
        return active

    def _children(self, node_id: str | None, active: set[str]) -> list[str]:
        """The children of ``node_id`` that are nodes, the active one first, each id once."""
        kids = list(dict.fromkeys(k for k in self.tree.children.get(node_id, ()) if k in self.tree.nodes))
        for index, kid in enumerate(kids):
            if kid in active and index:
                kids.insert(0, kids.pop(index))
                break
        return kids

    def _lay_out(self) -> None:
        tree = self.tree
        active = self._active_path()
        named = self._named
        seen: set[str] = set()
        lines = self.lines
        # (node, connectors of its line, connectors of the lines below it, index of the line above it)
        stack: list[tuple[str, _Gutter, _Gutter, int]] = []
        roots = self._children(None, active)
        if len(roots) > 1:
            stack.extend(_branches(roots, _START, -1))
        elif roots:
            stack.append((roots[0], _START, _START, -1))
        while stack:
            node_id, prefix, below, parent = stack.pop()
            while True:  # along the chain: no branch, no new connector
                if node_id in seen:
                    break
                seen.add(node_id)
                node = tree.nodes[node_id]
                kids = self._children(node_id, active)
                branch_point = len(kids) > 1
                if branch_point or parent < 0 or node_id in named or node_id == tree.leaf or self._matters(node_id):
                    leaf = node_id == tree.leaf
                    line = TreeLine(node_id, prefix.drawn, parent, node_id in active, leaf, node.ts, len(lines))
                    self._at[node_id] = line.index
                    lines.append(line)
                    parent, prefix = line.index, below
                if branch_point:
                    stack.extend(_branches(kids, below, parent))
                    break
                if not kids:
                    break
                node_id = kids[0]
        self._close_ends()
        missing = len(tree.nodes) - len(seen)
        if missing:
            self.notice = (
                f"{missing} of the session's {len(tree.nodes)} messages are not reachable from its start "
                "(a missing parent, a loop or a repeated id): the tree shows the rest"
            )

    def _matters(self, node_id: str) -> bool:
        reading = self.reader.read(node_id)
        match reading:
            case Task() | Steer() | Summary() | Carried():
                return True
            case Answer(text=text):
                return bool(text.strip())
            case _:
                return reading.part == "damaged"

    def _close_ends(self) -> None:
        """Each line's ``end``: the last line of its subtree (lines of a subtree are contiguous)."""
        open_: list[int] = []
        for line in self.lines:
            while open_ and open_[-1] != line.parent:
                self.lines[open_.pop()].end = line.index - 1
            open_.append(line.index)
        last = len(self.lines) - 1
        for index in open_:
            self.lines[index].end = last

    # --- reading a line -------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.lines)

    def index_of(self, node_id: str) -> int | None:
        """The index of the line of ``node_id`` (None: it does not show)."""
        return self._at.get(node_id)

    def who(self, line: TreeLine) -> str:
        return who_spoke(self.reader.read(line.node))

    def text(self, line: TreeLine) -> str:
        """The first line of what the node says (at most 80 characters)."""
        text = self._texts.get(line.node)
        if text is None:
            reading = self.reader.read(line.node)
            if isinstance(reading, Answer) and reading.plan:  # the plan, or a step's verdict, as the plan shows it
                text = summary(reading)
            elif isinstance(reading, Task | Answer) and reading.text.strip():
                first = next(part for part in reading.text.splitlines() if part.strip())
                text = summary(Task(reading.node, first, first, left_out_of(reading)))
            else:
                text = summary(reading)
            self._texts[line.node] = text
        return text

    def names(self, line: TreeLine) -> list[str]:
        """The node's names (checkpoints, labels), oldest first."""
        return self._named.get(line.node, [])

    def age(self, line: TreeLine) -> str:
        return age(max(0.0, self.clock() - line.ts))

    def mark(self, line: TreeLine) -> str:
        """``◆`` the leaf, ``•`` on the active path, ``○`` elsewhere."""
        return "◆" if line.leaf else "•" if line.active else "○"

    def matches(self, line: TreeLine, query: str) -> bool:
        """Whether ``query`` (lower case) is in the line's words, who spoke, names or id."""
        lower = self._lower.get(line.node)
        if lower is None:
            lower = self._lower[line.node] = " ".join(
                [line.node, self.who(line), self.text(line), *self.names(line)]
            ).lower()
        return query in lower

    def read_words(self) -> None:
        """Read what every line says now, for searches to come (run it off the screen's thread)."""
        for line in self.lines:
            self.matches(line, "")

    def matching(self, query: str) -> set[int]:
        """The indexes of the lines holding ``query`` (any case). A query that goes on from the last one
        looks only among the lines that held that one."""
        low = query.lower()
        last, found = self._last_match
        pool: Iterable[int] = found if last and low.startswith(last) else range(len(self.lines))
        matched = {index for index in pool if self.matches(self.lines[index], low)}
        self._last_match = (low, matched)
        return matched

    def plain(self, line: TreeLine, *, ids: bool = True) -> str:
        """The line as text: connectors, mark, id, who, age, words, names."""
        names = self.names(line)
        label = f"  [{', '.join(names)}]" if names else ""
        node = f"{line.node}  " if ids else ""
        return f"{line.prefix}{self.mark(line)} {node}{self.who(line):<8} {self.age(line):>4}  {self.text(line)}{label}"

    # --- which lines show -----------------------------------------------------------------

    def visible(self, folded: Sequence[int] | set[int] = (), view: str = "all", query: str = "") -> list[int]:
        """The indexes of the lines shown: those below a folded line are hidden; ``view`` (one of
        :data:`FILTERS`) and ``query`` (words a line holds, any case) keep only the lines that fit."""
        folds = set(folded)
        shown: list[int] = []
        index, count = 0, len(self.lines)
        found = self.matching(query) if query else None
        while index < count:
            line = self.lines[index]
            if (found is None or index in found) and self._fits(line, view):
                shown.append(index)
            index = line.end + 1 if index in folds and line.end > index else index + 1
        return shown

    def _fits(self, line: TreeLine, view: str) -> bool:
        if view == "turns":
            return self.who(line) in {"you", "steering"}
        return view != "named" or line.node in self._named


def _branches(kids: list[str], below: _Gutter, parent: int) -> list[tuple[str, _Gutter, _Gutter, int]]:
    """The stack entries of a branch point's children, the first on top: each one level inside ``below``."""
    entries = []
    for index, kid in enumerate(kids):
        last = index == len(kids) - 1
        entries.append((kid, below.inside(_LAST if last else _MIDDLE), below.inside(_SPACE if last else _BAR), parent))
    entries.reverse()
    return entries
