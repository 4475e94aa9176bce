"""Reading the terminal: a bracketed paste arrives as one paste whatever it holds (ESC sequences, newlines, a
marker's start) and however the reads cut it; the keys around it stay keys."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from textual import events
from textual.message import Message

from chimera.tui.terminal_input import PASTE_END, PASTE_PIECE, PASTE_START, PasteParser

COLOURED = "FAILED test_x.py::test_y\n\x1b[31mAssertionError\x1b[0m: 1 != 2\n\x1b]0;title\x07done\n"


def read(chunks: list[str]) -> list[Message]:
    parser = PasteParser()
    out: list[Message] = []
    for chunk in chunks:
        out += parser.feed(chunk)
    return out


def pastes(messages: list[Message]) -> list[str]:
    return [m.text for m in messages if isinstance(m, events.Paste)]


def keys(messages: list[Message]) -> list[str]:
    return [m.key for m in messages if isinstance(m, events.Key)]


def test_a_paste_holding_escape_sequences_and_newlines_is_one_paste() -> None:
    """Coloured output pasted whole: one paste with every character, no key pressed (so no enter sends it)."""
    got = read([f"ab{PASTE_START}{COLOURED}{PASTE_END}c"])
    assert pastes(got) == [COLOURED]
    assert keys(got) == ["a", "b", "c"]


@given(
    before=st.text(alphabet="abc xyz", max_size=5),
    pasted=st.text(alphabet=st.sampled_from(["a", "\n", "\x1b", "[", "2", "0", "1", "~", "\r", "m", "é"]), max_size=40),
    after=st.text(alphabet="abc xyz", max_size=5),
    cuts=st.lists(st.integers(min_value=0, max_value=80), max_size=6),
)
def test_any_cut_of_the_reads_gives_the_same_paste(before: str, pasted: str, after: str, cuts: list[int]) -> None:
    """However the terminal's bytes are cut into reads, the paste comes whole and the keys around it as keys."""
    if PASTE_END in pasted:  # a terminal never sends its end marker inside a paste
        pasted = pasted.replace(PASTE_END, "")
    stream = before + PASTE_START + pasted + PASTE_END + after
    points = sorted({min(c, len(stream)) for c in cuts})
    chunks = [stream[a:b] for a, b in zip([0, *points], [*points, len(stream)], strict=True) if b > a]
    got = read(chunks)
    assert pastes(got) == [pasted]
    assert "".join(k.character or "" for k in got if isinstance(k, events.Key)) == before.replace(" ", " ") + after


def test_a_lone_escape_at_the_end_of_a_read_is_the_escape_key_after_the_delay() -> None:
    """An ESC that might start a paste's marker waits; nothing follows it, so it is the escape key."""
    parser = PasteParser()
    assert list(parser.feed("\x1b")) == []
    parser._held_since -= 1  # the escape delay has passed
    got = list(parser.tick())  # handed to Textual's parser, which waits its own delay for more
    parser._timeout_time = 0.0  # and that delay has passed too
    got += list(parser.tick())
    assert "escape" in keys(got)


def test_a_paste_that_never_ends_is_given_on_in_pieces() -> None:
    """An unclosed paste does not grow without bound: each piece of it arrives as a paste."""
    parser = PasteParser()
    piece = "x" * 4096
    got: list[Message] = []
    got += parser.feed(PASTE_START)
    for _ in range(PASTE_PIECE // len(piece) + 1):
        got += parser.feed(piece)
    assert sum(len(p) for p in pastes(got)) >= PASTE_PIECE
