"""Provides glob patterns as regular expressions, with ``**`` and ``{a,b}`` as ripgrep reads them.

``*`` and ``?`` stay inside one folder, ``**/`` crosses any number of folders
(none included), ``[...]`` is a character class and ``{a,b}`` an alternation.
A pattern with no ``/`` matches a file's name in any folder. A pattern that
names a hidden part (`.github/**`, `**/.env*`) also searches hidden files.

:func:`glob_regex` is what a pattern means; :func:`glob_matches` answers the same
without backtracking: the pattern becomes a small automaton (each state a set of
places in the pattern, built as paths need them), so a path costs time in
proportion to its length whatever the pattern. A regular expression would take
ages on ``**a**a**a…**b`` against a long name, with Chimera frozen meanwhile.
"""

from __future__ import annotations

import re
import threading
from functools import lru_cache

__all__ = ["glob_matches", "glob_regex", "names_hidden"]

_HIDDEN_PART = re.compile(r"(?:^|[/{,])\.")


@lru_cache(maxsize=256)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile ``pattern`` into a regular expression over posix relative paths (ValueError if invalid)."""
    original = pattern
    if "/" not in pattern.rstrip("/") and not pattern.startswith("**"):
        pattern = "**/" + pattern
    out: list[str] = []
    i, n = 0, len(pattern)
    depth = 0
    while i < n:
        c = pattern[i]
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if pattern.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = pattern.find("]", i + 2)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append(f"[{body}]")
                i = end
        elif c == "{":
            depth += 1
            out.append("(?:")
        elif c == "}" and depth:
            depth -= 1
            out.append(")")
        elif c == "," and depth:
            out.append("|")
        else:
            out.append(re.escape(c))
        i += 1
    if depth:
        raise ValueError(f"{original!r} has a `{{` that is never closed")
    try:
        return re.compile("".join(out) + r"\Z", re.DOTALL)
    except re.error as err:
        raise ValueError(f"{original!r} is not a valid glob: {err}") from None


def glob_matches(relative: str, pattern: str) -> bool:
    """True when the posix path ``relative`` matches ``pattern``; ValueError when the pattern is invalid.

    The answer :func:`glob_regex` gives, in time linear in the length of ``relative``.
    """
    return _matcher(pattern).matches(relative)


# Places in a pattern (automaton states): each consumes one character, or leads on without one.
_EMPTY, _CHAR, _NOT_SLASH, _ANY, _CLASS, _END = range(6)


class _Automaton:
    """A glob as a nondeterministic automaton, run as a deterministic one whose states are made as needed."""

    _MAX_STATES = 4096  # deterministic states kept; past that the table starts afresh

    def __init__(self, pattern: str) -> None:
        self.kinds: list[int] = []
        self.args: list[object] = []  # the character, or the class's compiled expression
        self.outs: list[list[int]] = []
        self._build(pattern)
        self._lock = threading.Lock()
        self._start_set = self._closure([0])
        self._reset()

    # --- building --------------------------------------------------------------------

    def _place(self, kind: int, arg: object = None) -> int:
        self.kinds.append(kind)
        self.args.append(arg)
        self.outs.append([])
        return len(self.kinds) - 1

    def _step(self, at: int, kind: int, arg: object = None) -> int:
        """From ``at``, one character of ``kind``; returns the empty place after it."""
        eat = self._place(kind, arg)
        self.outs[at].append(eat)
        after = self._place(_EMPTY)
        self.outs[eat].append(after)
        return after

    def _repeat(self, at: int, kind: int) -> int:
        """From ``at``, any number of characters of ``kind``; returns the empty place after them."""
        loop = self._place(_EMPTY)
        self.outs[at].append(loop)
        eat = self._place(kind)
        self.outs[loop].append(eat)
        self.outs[eat].append(loop)
        after = self._place(_EMPTY)
        self.outs[loop].append(after)
        return after

    def _build(self, pattern: str) -> None:
        """The same reading of ``pattern`` as :func:`glob_regex` (which has already accepted it)."""
        if "/" not in pattern.rstrip("/") and not pattern.startswith("**"):
            pattern = "**/" + pattern
        at = self._place(_EMPTY)
        groups: list[tuple[int, list[int]]] = []  # open `{`: where its branches start, and where they end
        i, n = 0, len(pattern)
        while i < n:
            c = pattern[i]
            if pattern.startswith("**/", i):  # (?:.*/)?
                skip = self._place(_EMPTY)
                self.outs[at].append(skip)
                at = self._step(self._repeat(at, _ANY), _CHAR, "/")
                self.outs[at].append(skip)
                at = skip
                i += 3
                continue
            if pattern.startswith("**", i):
                at = self._repeat(at, _ANY)
                i += 2
                continue
            if c == "*":
                at = self._repeat(at, _NOT_SLASH)
            elif c == "?":
                at = self._step(at, _NOT_SLASH)
            elif c == "[" and (end := pattern.find("]", i + 2)) != -1:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                at = self._step(at, _CLASS, re.compile(f"[{body}]", re.DOTALL))
                i = end
            elif c == "{":
                branch = self._place(_EMPTY)
                self.outs[at].append(branch)
                groups.append((at, []))
                at = branch
            elif c == "}" and groups:
                fork, ends = groups.pop()
                ends.append(at)
                at = self._place(_EMPTY)
                for end_ in ends:
                    self.outs[end_].append(at)
            elif c == "," and groups:
                fork, ends = groups[-1]
                ends.append(at)
                at = self._place(_EMPTY)
                self.outs[fork].append(at)
            else:
                at = self._step(at, _CHAR, c)
            i += 1
        self.outs[at].append(self._place(_END))

    # --- running ---------------------------------------------------------------------

    def _closure(self, places: list[int]) -> frozenset[int]:
        seen = set(places)
        todo = list(places)
        while todo:
            place = todo.pop()
            if self.kinds[place] == _EMPTY:
                for nxt in self.outs[place]:
                    if nxt not in seen:
                        seen.add(nxt)
                        todo.append(nxt)
        return frozenset(p for p in seen if self.kinds[p] != _EMPTY)

    def _reset(self) -> None:
        self._ids: dict[frozenset[int], int] = {}
        self._sets: list[frozenset[int]] = []
        self._rows: list[dict[str, int]] = []
        self._accepts: list[bool] = []
        self._start = self._state(self._start_set)
        self._dead = self._state(frozenset())

    def _state(self, places: frozenset[int]) -> int:
        found = self._ids.get(places)
        if found is None:
            found = self._ids[places] = len(self._sets)
            self._sets.append(places)
            self._rows.append({})
            self._accepts.append(any(self.kinds[p] == _END for p in places))
        return found

    def _next(self, state: int, char: str) -> int:
        with self._lock:
            if len(self._sets) > self._MAX_STATES:
                self._reset()
                return -1  # the table changed under the caller: it starts over
            moved = []
            for place in self._sets[state]:
                kind = self.kinds[place]
                if (
                    kind == _ANY
                    or (kind == _NOT_SLASH and char != "/")
                    or (kind == _CHAR and self.args[place] == char)
                    or (kind == _CLASS and self.args[place].match(char) is not None)  # type: ignore[attr-defined]
                ):
                    moved += self.outs[place]
            found = self._state(self._closure(moved))
            self._rows[state][char] = found
            return found

    def matches(self, text: str) -> bool:
        while True:
            rows, dead = self._rows, self._dead
            state = self._start
            for char in text:
                found = rows[state].get(char)
                if found is None:
                    found = self._next(state, char)
                    if found < 0:
                        break
                if found == dead:
                    return False
                state = found
            else:
                return self._accepts[state]


@lru_cache(maxsize=256)
def _matcher(pattern: str) -> _Automaton:
    glob_regex(pattern)  # refuses what the regular expression refuses, with the same message
    return _Automaton(pattern)


def names_hidden(pattern: str | None) -> bool:
    """True when a part of ``pattern`` starts with a dot (`.github/**`, `.env*`): hidden files are then searched."""
    return bool(pattern) and _HIDDEN_PART.search(pattern or "") is not None
