"""Provides gitignore rules read the way ripgrep reads them, so both search backends skip the same files.

A rule file is parsed line by line: `#` comments, blank lines, `!` negation,
a trailing `/` for folders only, a leading `/` (or any inner `/`) to anchor at
the file's folder, `\\` escapes, `*`, `?`, `[...]`, `**` and `{a,b}`. The last
matching line wins. Globs become byte regular expressions built exactly as
ripgrep's globset builds them (`*` and `?` never cross `/`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["IGNORE", "NONE", "WHITELIST", "RuleFile", "glob_to_regex", "parse_rules"]

NONE, IGNORE, WHITELIST = 0, 1, 2

# Rust's char::is_whitespace, which ripgrep uses to trim the end of a line.
_RUST_SPACE = (
    "\t\n\x0b\x0c\r \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u2028\u2029\u202f\u205f\u3000"
)

# Kinds of glob tokens: a character, `?`, `*`, `**/` first, `/**` last, `/**/`, `[...]`, `{a,b}`.
_LIT, _ANY, _STAR, _RPREFIX, _RSUFFIX, _RZOM, _CLASS, _ALT = range(8)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: int
    char: str = ""
    negated: bool = False
    ranges: tuple[tuple[str, str], ...] = ()
    alternates: tuple[tuple[_Token, ...], ...] = ()


class _GlobParser:
    """A port of globset's parser with gitignore options (literal separator, escapes, unclosed `[`)."""

    def __init__(self, glob: str) -> None:
        self.chars = glob
        self.i = 0
        self.prev: str | None = None
        self.cur: str | None = None
        self.branches: list[list[_Token]] = [[]]
        self.alternates: list[int] = []
        self.unclosed_class = False

    def bump(self) -> str | None:
        self.prev = self.cur
        self.cur = self.chars[self.i] if self.i < len(self.chars) else None
        self.i += 1
        return self.cur

    def peek(self) -> str | None:
        return self.chars[self.i] if self.i < len(self.chars) else None

    def push(self, token: _Token) -> None:
        self.branches[-1].append(token)

    def parse(self) -> list[_Token]:
        while (c := self.bump()) is not None:
            if c == "?":
                self.push(_Token(_ANY))
            elif c == "*":
                self._star()
            elif c == "[" and not self.unclosed_class:
                self._class()
            elif c == "{":
                self.alternates.append(len(self.branches))
                self.branches.append([])
            elif c == "}":
                if not self.alternates:
                    raise ValueError("unopened alternate group")
                start = self.alternates.pop()
                alternates = tuple(tuple(branch) for branch in self.branches[start:])
                del self.branches[start:]
                self.push(_Token(_ALT, alternates=alternates))
            elif c == "," and self.alternates:
                self.branches.append([])
            elif c == "\\":
                escaped = self.bump()
                if escaped is None:
                    raise ValueError("dangling '\\'")
                self.push(_Token(_LIT, escaped))
            else:
                self.push(_Token(_LIT, c))
        if len(self.branches) > 1:
            raise ValueError("unclosed alternate group")
        return self.branches[0]

    def _star(self) -> None:
        prev = self.prev
        if self.peek() != "*":
            self.push(_Token(_STAR))
            return
        self.bump()
        if not self.branches[-1]:
            if self.peek() not in (None, "/"):
                self.push(_Token(_STAR))
                self.push(_Token(_STAR))
            else:
                self.push(_Token(_RPREFIX))
                self.bump()
            return
        if prev != "/" and (len(self.branches) <= 1 or prev not in (",", "{")):
            self.push(_Token(_STAR))
            self.push(_Token(_STAR))
            return
        following = self.peek()
        if following is None:
            self.bump()
            is_suffix = True
        elif following in (",", "}") and len(self.branches) >= 2:
            is_suffix = True
        elif following == "/":
            self.bump()
            is_suffix = False
        else:
            self.push(_Token(_STAR))
            self.push(_Token(_STAR))
            return
        popped = self.branches[-1].pop()
        if popped.kind in (_RPREFIX, _RSUFFIX):
            self.push(popped)
        else:
            self.push(_Token(_RSUFFIX if is_suffix else _RZOM))

    def _class(self) -> None:
        saved = (self.i, self.prev, self.cur)
        ranges: list[tuple[str, str]] = []
        negated = self.peek() in ("!", "^")
        if negated:
            self.bump()
        first, in_range = True, False
        while True:
            c = self.bump()
            if c is None:  # never closed: the `[` is a literal, and so is every later `[`
                self.i, self.prev, self.cur = saved
                self.unclosed_class = True
                self.push(_Token(_LIT, "["))
                return
            if c == "]" and not first:
                break
            if c == "-" and not first:
                if in_range:
                    ranges[-1] = _range(ranges[-1][0], "-")
                    in_range = False
                else:
                    in_range = True
            elif in_range:
                ranges[-1] = _range(ranges[-1][0], c)
                in_range = False
            else:
                ranges.append((c, c))
            first = False
        if in_range:
            ranges.append(("-", "-"))
        self.push(_Token(_CLASS, negated=negated, ranges=tuple(ranges)))


def _range(start: str, end: str) -> tuple[str, str]:
    if end < start:
        raise ValueError(f"invalid range {start}-{end}")
    return (start, end)


def _literal(c: str) -> bytes:
    out = b""
    for byte in c.encode("utf-8", "surrogateescape"):
        out += re.escape(bytes([byte])) if byte < 0x80 else b"\\x%02x" % byte
    return out


def _tokens_regex(tokens: tuple[_Token, ...] | list[_Token]) -> bytes:
    out: list[bytes] = []
    for token in tokens:
        kind = token.kind
        if kind == _LIT:
            out.append(_literal(token.char))
        elif kind == _ANY:
            out.append(b"[^/]")
        elif kind == _STAR:
            out.append(b"[^/]*")
        elif kind == _RPREFIX:
            out.append(b"(?:/?|.*/)")
        elif kind == _RSUFFIX:
            out.append(b"/.*")
        elif kind == _RZOM:
            out.append(b"(?:/|/.*/)")
        elif kind == _CLASS:
            body = b"".join(_literal(a) if a == b else _literal(a) + b"-" + _literal(b) for a, b in token.ranges)
            out.append(b"[" + (b"^" if token.negated else b"") + body + b"]")
        else:
            parts = [part for branch in token.alternates if (part := _tokens_regex(branch))]
            if parts:
                out.append(b"(?:" + b"|".join(parts) + b")")
    return b"".join(out)


def glob_to_regex(glob: str) -> bytes:
    """The byte regular expression (without anchors) ripgrep uses for one gitignore glob."""
    tokens = _GlobParser(glob).parse()
    if tokens == [_Token(_RPREFIX)]:
        return b".*"
    return _tokens_regex(tokens)


@dataclass(frozen=True, slots=True)
class _Rule:
    regex: re.Pattern[bytes]
    whitelist: bool
    only_dir: bool


class RuleFile:
    """The rules of one ignore file, matched against paths relative to its folder."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._rules = rules[::-1]  # the last matching line wins
        self._any = re.compile(b"(?:" + b"|".join(r.regex.pattern for r in rules) + b")")

    def match(self, relative: bytes, is_dir: bool) -> int:
        """NONE, IGNORE or WHITELIST for a path (posix bytes, relative to the file's folder)."""
        if self._any.match(relative) is None:
            return NONE
        for rule in self._rules:
            if (is_dir or not rule.only_dir) and rule.regex.match(relative):
                return WHITELIST if rule.whitelist else IGNORE
        return NONE


def _parse_line(line: str) -> _Rule | None:
    if line.startswith("#"):
        return None
    if not line.endswith("\\ "):
        line = line.rstrip(_RUST_SPACE)
    if not line:
        return None
    whitelist = only_dir = anchored = False
    if line.startswith(("\\!", "\\#")):
        line = line[1:]
    else:
        if line.startswith("!"):
            whitelist, line = True, line[1:]
        if line.startswith("/"):
            anchored, line = True, line[1:]
    if line.endswith("/"):
        only_dir, line = True, line[:-1]
        if line.endswith("\\"):
            line = line[:-1]
    glob = line
    if not anchored and "/" not in line and not (glob.startswith("**/") or glob == "**"):
        glob = "**/" + glob
    if glob.endswith("/**"):
        glob += "/*"
    try:
        body = glob_to_regex(glob)
        return _Rule(re.compile(b"(?:" + body + b")\\Z"), whitelist, only_dir)
    except (ValueError, re.error):
        return None  # ripgrep reports the bad line and skips it


def parse_rules(data: bytes) -> RuleFile | None:
    """Rules from the bytes of an ignore file, or None when it holds none.

    Like ripgrep, reading stops at the first line that is not valid UTF-8.
    """
    pieces = data.split(b"\n")
    last_terminated = len(pieces) - 1
    if pieces[-1] == b"":
        pieces.pop()
    rules: list[_Rule] = []
    for number, raw in enumerate(pieces):
        if number < last_terminated and raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError:
            break
        if number == 0:
            line = line.lstrip("\ufeff")
        rule = _parse_line(line)
        if rule is not None:
            rules.append(rule)
    return RuleFile(rules) if rules else None
