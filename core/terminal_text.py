"""Provides ``terminal_safe``: untrusted text made safe to show on a terminal, its control characters visible;
and ``is_blank``, which tells text with nothing to read in it.

What a model writes, what a tool prints, a session's titles, labels and file
names: any of it may hold terminal control sequences (ESC, CSI, OSC) that
retitle the terminal, rewrite the screen or set the clipboard (OSC 52), a
carriage return or backspace that overwrites what was shown, or a bidi
override (U+202E) that makes text read other than it is. ``terminal_safe``
shows each such character as an escape a person can read (``\\x1b``,
``\\x9b``, ``\\u202e``), so it reaches the terminal as plain characters and
does nothing. Newlines and tabs stay as they are in multi-line text; a
carriage return that ends a line (``\\r\\n``, or the end of the text) is
dropped, one anywhere else is shown.

JSON output keeps every value exact: ``json.dumps`` escapes the C0 controls
itself, and ``inert_json`` escapes the rest (DEL, C1, bidi controls), which
``ensure_ascii=False`` would leave raw, as ``\\u`` escapes of the same value.

``flat`` puts text on one line for a summary: the spaces, tabs and newlines between words become one
space, and nothing else is taken for a space, so a carriage return, a vertical tab or a line separator
stays in it, for ``terminal_safe`` to show (a command's ``safe\\rrm -rf x`` must not read as two words).

``is_blank`` tells text with nothing a person could read in it (spaces, line breaks,
zero-width and other invisible characters only): a task or steering of that kind is
refused, never sent.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["flat", "inert_json", "is_blank", "terminal_safe"]

# C0 controls but tab, newline and carriage return; DEL; C1 controls; the bidi marks, embeddings,
# overrides and isolates (U+061C, U+200E-F, U+202A-E, U+2066-9); the line and paragraph separators.
_CONTROLS = "\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
_MULTI_LINE = re.compile(f"(?P<line_end>\r(?=\n|\\Z))|[{_CONTROLS}\r]")
_ONE_LINE = re.compile(f"[{_CONTROLS}\t\n\r]")
_SPACING = re.compile("(?:\r\n|[ \t\n])+")
_LEFT_RAW_BY_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def terminal_safe(text: str, *, one_line: bool = False) -> str:
    """``text`` with every character that could steer a terminal shown as an escape instead.

    With ``one_line`` newlines and tabs are shown as ``\\n`` and ``\\t`` too, for text that
    must stay on its line (a title, a file name, an error). Text with nothing to escape comes
    back as it was.
    """
    pattern = _ONE_LINE if one_line else _MULTI_LINE
    if pattern.search(text) is None:
        return text
    return pattern.sub(_visible, text)


def flat(text: str) -> str:
    """``text`` on one line: each run of spaces, tabs and newlines (``\\r\\n`` too) one space, the ends trimmed;
    every other character kept as it is, for :func:`terminal_safe` to show."""
    return _SPACING.sub(" ", text).strip(" ")


def _visible(match: re.Match[str]) -> str:
    if match.lastgroup == "line_end":  # a carriage return that ends a line of multi-line text
        return ""
    char = match.group()
    named = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def inert_json(text: str) -> str:
    """JSON ``text`` (from ``json.dumps``) with the steering characters it left raw as ``\\u`` escapes.

    Outside strings JSON holds only structure and plain spaces, so each such character is
    inside a string, where its escape stands for the very same value.
    """
    if _LEFT_RAW_BY_JSON.search(text) is None:
        return text
    return _LEFT_RAW_BY_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def is_blank(text: str) -> bool:
    """Whether ``text`` holds nothing a person could read: only whitespace, controls and invisible
    format characters (zero-width spaces and joiners, a BOM, bidi marks)."""
    return all(char.isspace() or unicodedata.category(char) in ("Cc", "Cf") for char in text)
