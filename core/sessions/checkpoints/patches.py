"""Provides what turns git's diff of two snapshots into one that hides no text: git calls a file binary
when a NUL byte is in it, and shows one ``Binary files a/x and b/x differ`` line where lines were added.
A file whose both sides read as UTF-8 (NUL included) is text to a person, so its section is taken from a
``--text`` diff instead (its lines then show with the NUL escaped, as ``difflines`` shows any control
character); a file that is not UTF-8 (an image) keeps git's one line.
"""

from __future__ import annotations

import re

__all__ = ["is_text", "lines_of", "names_binary", "splice", "split_sections"]

_SECTION = re.compile(rb"^diff --git ", re.MULTILINE)  # a diff line starts with " ", "+", "-" or "\": never this
_BINARY = re.compile(rb"^Binary files ", re.MULTILINE)


def is_text(content: bytes) -> bool:
    """Whether ``content`` reads as UTF-8 text (control characters, NUL among them, are text here)."""
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def names_binary(patch: bytes) -> bool:
    """Whether git's ``patch`` shows some file as binary (one line, no lines of its own)."""
    return _BINARY.search(patch) is not None


def splice(patch: bytes, sections: list[bytes]) -> bytes:
    """``patch`` with each file's binary section replaced by that file's section among ``sections`` (of a
    ``--text`` diff of the same snapshots, for some of their paths): a section is known by its ``diff --git``
    line."""
    texts = {_head(section): section for section in sections}
    return b"".join(
        texts.get(_head(section), section) if names_binary(section) else section for section in split_sections(patch)
    )


def split_sections(patch: bytes) -> list[bytes]:
    """``patch`` cut before each ``diff --git`` line: one section a file."""
    starts = [match.start() for match in _SECTION.finditer(patch)]
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    return [patch[start:end] for start, end in zip(starts, [*starts[1:], len(patch)], strict=True) if end > start]


def lines_of(section: bytes) -> tuple[int, int]:
    """The lines one file's section of a diff adds and removes."""
    hunks = section[section.find(b"\n@@") + 1 :] if b"\n@@" in section else b""
    lines = hunks.split(b"\n")
    return sum(line.startswith(b"+") for line in lines), sum(line.startswith(b"-") for line in lines)


def _head(section: bytes) -> bytes:
    return section.split(b"\n", 1)[0]
