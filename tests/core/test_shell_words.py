"""Words are read as bash reads them: `$'…'` escapes and brace expansion are compared with bash itself."""

from __future__ import annotations

import os
import subprocess

from hypothesis import given
from hypothesis import strategies as st

from chimera.core.permissions.shell import parse_line

BASH_ENV = {**os.environ, "LC_ALL": "C.UTF-8"}


def bash_words(word: str) -> list[bytes] | None:
    """The words bash makes of ``word`` (None when bash refuses it)."""
    script = f"for w in {word}; do printf '%s\\0' \"$w\"; done"
    out = subprocess.run(["bash", "-c", script], capture_output=True, env=BASH_ENV, timeout=20)
    if out.returncode != 0:
        return None
    return out.stdout.split(b"\0")[:-1]


def chimera_words(word: str) -> list[bytes] | None:
    """The words Chimera reads in ``word`` (None when it calls it unknown until run time, or hidden)."""
    line = parse_line(f"echo -- {word}")
    if line.opaque:
        return None
    [invocation] = line.invocations
    texts = [arg.text for arg in invocation.layers[0].operands]
    if any(t is None for t in texts):
        return None
    return [t.encode("utf-8", "surrogateescape") for t in texts if t is not None]


ESCAPES = st.sampled_from(
    [
        " ",
        "a",
        "m",
        "r",
        "-",
        "0",
        "7",
        "9",
        "f",
        "F",
        "x",
        r"\x",
        r"\u",
        r"\U",
        r"\0",
        r"\1",
        r"\7",
        r"\c",
        r"\n",
        r"\t",
        r"\e",
        r"\E",
        r"\'",
        r"\"",
        r"\\",
        r"\q",
        r"\?",
        r"\8",
        r"\a",
        r"\v",
        r"\cA",
        r"\c?",
    ]
)


@given(body=st.lists(ESCAPES, max_size=8).map("".join))
def test_ansi_c_strings_decode_exactly_as_bash_decodes_them(body: str) -> None:
    """`$'…'` with hex, octal, \\u, \\U, control and unknown escapes, cut at a NUL, is the text bash makes."""
    word = f"$'{body}'"
    mine = chimera_words(word)
    if mine is None:
        return  # Chimera calls the word unknown: a deny rule treats it as matching anything
    assert mine == bash_words(word), word


BRACE_PIECES = st.sampled_from(
    ["a", "b", "Z", "0", "1", "3", "-", "{", "}", ",", "..", "{}", "'x,y'", "\\,", '"q"', "@"]
)


@given(word=st.lists(BRACE_PIECES, min_size=1, max_size=9).map("".join))
def test_brace_expansion_gives_the_words_bash_gives(word: str) -> None:
    """`a{b,c}`, `{1..3}`, nested and unbalanced braces, quoted or escaped commas: the words bash makes."""
    expected = bash_words(word)
    if expected is None:
        return  # not a word bash accepts
    mine = chimera_words(word)
    if mine is None:
        return  # Chimera calls the word unknown: a deny rule treats it as matching anything
    assert mine == expected, word
