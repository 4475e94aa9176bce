"""Provides ``EntryLines``: each transcript entry's rendered lines, kept by entry, width and look.

The timeline (``widgets.transcript_view``) asks it for an entry's lines when
the entry comes on screen, and for its height when it lays the transcript out.
An entry is rendered once per version, width, fold and colouring and kept as
plain segments (a Textual ``Strip`` carries about 1 KB of caches of its own).
An entry never drawn has an estimated height, made once a version. Past
``budget`` lines the least recently drawn entries let their lines go and keep
only how many there were, so the layout stays exact and a long session's
memory stays bounded. An answer still streaming renders each finished block
once and only its open tail again as text arrives.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from rich.console import RenderableType
from rich.segment import Segment

from chimera.tui.look import Look
from chimera.tui.state import Entry
from chimera.tui.transcript_render import render_entry, settled_length

__all__ = ["LINE_BUDGET", "EntryLines", "Laid", "Line", "estimate", "same_lines"]

LINE_BUDGET = 10_000  # rendered lines kept (~1.4 KB a line of Markdown); older entries keep only their height

Line = tuple[Segment, ...]  # a rendered line as it is kept: a Strip carries ~1 KB of caches, a tuple none
Key = tuple[int, int, bool, int]  # what an entry's lines depend on: its version, the width, its fold, the colouring
Laid = tuple[Key, list[Line] | int]  # an entry's key and lines (or only how many)


class EntryLines:
    """The rendered lines of a transcript's entries, by ``Entry.serial``.

    Args:
        draw: renders a renderable at a width into lines (the view's console, in the theme's Markdown colours).
        look: the colours entries are drawn in, asked for when an entry is rendered.
    """

    def __init__(self, draw: Callable[[RenderableType, int], list[Line]], look: Callable[[], Look]) -> None:
        self._draw = draw
        self._look = look
        # entry.serial -> (its key, its lines or only how many: an estimate before it is first drawn, the real
        # count once its lines were let go), least recently drawn first
        self.by_entry: dict[int, Laid] = {}
        self.kept = 0  # lines held in by_entry
        self.budget = LINE_BUDGET
        self.settled: dict[int, tuple[tuple[int, int], list[Line]]] = {}  # a streaming answer's finished blocks
        self.colouring = 0  # grows with every theme change: lines drawn before it are drawn again

    def recolour(self) -> None:
        """The colours changed: every entry is rendered again when next drawn (its height stands)."""
        self.colouring += 1
        self.settled.clear()

    def laid(self, entry: Entry, width: int) -> Laid:
        """``entry``'s key and lines at ``width`` for a layout: its lines if drawn as it is, else an estimate
        of how many (made once, until the entry changes or is drawn)."""
        key = (entry.version, width, entry.folded, self.colouring)
        cached = self.by_entry.get(entry.serial)
        if cached is None or cached[0][:3] != key[:3]:
            cached = self.by_entry[entry.serial] = (key, estimate(entry, width))
        return cached

    def keep_only(self, alive: Iterable[int]) -> None:
        """Let go of the entries not in ``alive`` (serials): a retry took them away."""
        for gone in self.by_entry.keys() - set(alive):
            held = self.by_entry.pop(gone)[1]
            self.kept -= 0 if isinstance(held, int) else len(held)
            self.settled.pop(gone, None)

    def lines(self, entry: Entry, width: int) -> list[Line]:
        """``entry``'s lines at ``width``, rendered now unless they are kept as they are."""
        key = (entry.version, width, entry.folded, self.colouring)
        ident = entry.serial
        cached = self.by_entry.get(ident)
        if cached is not None and cached[0] == key and not isinstance(cached[1], int):
            if next(reversed(self.by_entry)) != ident:  # drawn now: the last to be let go
                del self.by_entry[ident]
                self.by_entry[ident] = cached
            return cached[1]
        if entry.kind == "text" and entry.streaming:
            lines = self._streaming(entry, width)
        else:
            self.settled.pop(ident, None)
            lines = self._draw(render_entry(entry, self._look()), width)
        self._keep(ident, key, lines)
        return lines

    def _keep(self, ident: int, key: Key, lines: list[Line]) -> None:
        """Keep an entry's lines. Past ``budget`` lines the least recently drawn entries let theirs go
        and keep only how many there were: the layout stays exact, and they are rendered again if they
        come back on screen."""
        old = self.by_entry.pop(ident, None)
        if old is not None and not isinstance(old[1], int):
            self.kept -= len(old[1])
        self.by_entry[ident] = (key, lines)
        self.kept += len(lines)
        if self.kept <= self.budget:
            return
        for other, (other_key, held) in list(self.by_entry.items()):
            if self.kept <= self.budget * 3 // 4 or other == ident:
                break
            if not isinstance(held, int):
                self.by_entry[other] = (other_key, len(held))
                self.kept -= len(held)

    def _streaming(self, entry: Entry, width: int) -> list[Line]:
        """An answer still streaming: each finished block is rendered once and kept; only the open
        tail is rendered again as text arrives, its code plain until its block is finished (the whole
        answer is rendered once when it completes)."""
        cut = settled_length(entry.text)
        kept = self.settled.get(entry.serial)
        if kept is None or kept[0][1] != width:
            kept = ((0, width), [])
        done, lines = kept
        look = self._look()
        if cut > done[0]:  # new finished blocks: render them alone, keep the rest
            block = entry.text[done[0] : cut]
            drawn = self._draw(render_entry(Entry("text", block), look), width)
            lines = [*lines, (), *drawn] if lines else drawn
            kept = ((cut, width), lines)
        self.settled[entry.serial] = kept
        tail = entry.text[cut:]
        shown = list(lines)
        if tail.strip():
            if shown:
                shown.append(())
            shown += self._draw(render_entry(Entry("text", tail, streaming=True), look), width)  # code plain
        return shown or [()]


def same_lines(laid: list[Laid], was: list[Laid], index: int) -> int:
    """How many of entry ``index``'s first lines are the ones it had at the last layout (a streaming answer's
    finished blocks): the lines from there down are the ones to draw again."""
    if index >= len(was):
        return 0
    now, then = laid[index][1], was[index][1]
    if isinstance(now, int) or isinstance(then, int):
        return 0
    same = 0
    for new, old in zip(now, then, strict=False):
        if new is not old:
            break
        same += 1
    return same


def estimate(entry: Entry, width: int) -> int:
    """How many lines ``entry`` will take, before it is rendered: its text wrapped at ``width``."""
    if entry.folded or entry.kind == "notice":
        return 1
    text = entry.text if entry.kind != "tool" else entry.output
    lines = text.splitlines() or [""]
    return sum(max(1, -(-len(line) // width)) for line in lines) + (entry.kind == "tool")
