"""Provides ``disguised``: the first character of a rule's text that is not what it looks like, described.

A rule is compared with calls character by character, so a character that shows
as another (a no-break or ideographic space as a space, fullwidth ``ｒｍ`` as
``rm``, a Cyrillic ``р`` as a Latin ``p``) or shows as nothing at all (a
zero-width space, a byte-order mark, a bidi mark or override, a soft hyphen, a
variation selector) makes a rule that reads as one thing and matches another,
or nothing: ``bash(rm\\u00a0-rf *)`` reads as ``rm -rf *`` and never denied
``rm -rf``. Such a rule is refused where it is loaded, naming the character.

What is refused: any character Unicode calls default-ignorable (it draws
nothing), a control, format, private-use, surrogate or unassigned code point
(a tab aside), a space or separator other than the plain space, a character
whose compatibility form differs from it (fullwidth and halfwidth forms,
ligatures, superscripts, letter-like symbols), a mark written apart from the
letter it composes with (``e`` and U+0301 for ``é``) and, within one word, letters of
the Cyrillic or Greek script mixed with Latin ones. Words written wholly in one
script (``отчёт.txt``, ``データ``, ``café``) are what they look like and load.
"""

from __future__ import annotations

import unicodedata

__all__ = ["disguised"]

# Unicode's Default_Ignorable_Code_Point (DerivedCoreProperties.txt): characters that draw nothing.
_IGNORABLE = (
    (0x00AD, 0x00AD),
    (0x034F, 0x034F),
    (0x061C, 0x061C),
    (0x115F, 0x1160),
    (0x17B4, 0x17B5),
    (0x180B, 0x180F),
    (0x200B, 0x200F),
    (0x202A, 0x202E),
    (0x2060, 0x206F),
    (0x3164, 0x3164),
    (0xFE00, 0xFE0F),
    (0xFEFF, 0xFEFF),
    (0xFFA0, 0xFFA0),
    (0xFFF0, 0xFFF8),
    (0x1BCA0, 0x1BCA3),
    (0x1D173, 0x1D17A),
    (0xE0000, 0xE0FFF),
)
_BLANK = frozenset({0x2800})  # braille pattern blank: a letter-like symbol that draws as a space
_LOOKALIKE_SCRIPTS = ("CYRILLIC", "GREEK")


def disguised(text: str) -> str:
    """Why ``text`` does not say what it looks like ("" when it does): its first such character, named."""
    if text.isascii():
        return next((_named(c, "a control character") for c in text if not c.isprintable() and c != "\t"), "")
    for char in text:
        why = _why(char)
        if why:
            return _named(char, why)
    if not unicodedata.is_normalized("NFC", text):  # e + U+0301 shows as é, but is not the é a name holds
        odd = next((c for c in text if unicodedata.combining(c)), None) or next(c for c in text if not c.isascii())
        return _named(odd, "part of a letter written in pieces (write the letter composed)")
    return _mixed_scripts(text)


def _why(char: str) -> str:
    code = ord(char)
    if char == "\t" or (code < 0x80 and char.isprintable()):
        return ""
    if any(low <= code <= high for low, high in _IGNORABLE):
        return "an invisible character"
    if code in _BLANK:
        return "a blank that is not a space"
    category = unicodedata.category(char)
    if category in ("Zs", "Zl", "Zp"):
        return "a space that is not a plain space"
    if category[0] == "C":
        return "a control or unassigned character"
    plain = unicodedata.normalize("NFKC", char)
    if plain != char:
        return f"a character that looks like {plain!r}"
    return ""


def _mixed_scripts(text: str) -> str:
    """A Cyrillic or Greek letter in a word that also holds Latin letters, named; else ""."""
    word: list[str] = []
    for char in [*text, " "]:
        if char.isalpha():
            word.append(char)
            continue
        scripts = [_script(c) for c in word]
        if "LATIN" in scripts:
            odd = next((c for c, s in zip(word, scripts, strict=True) if s in _LOOKALIKE_SCRIPTS), None)
            if odd is not None:
                return _named(odd, f"a {_script(odd).title()} letter among Latin ones")
        word = []
    return ""


def _script(char: str) -> str:
    if char.isascii():
        return "LATIN"
    return unicodedata.name(char, "").split(" ", 1)[0]


def _named(char: str, why: str) -> str:
    name = unicodedata.name(char, "") or "unnamed"
    return f"U+{ord(char):04X} {name}, {why}"
