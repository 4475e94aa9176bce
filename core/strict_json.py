"""Provides the cleaning that keeps what Chimera holds encodable as strict JSON in UTF-8.

What a model sends is untrusted input: a server may split a UTF-16 surrogate
pair across two streamed deltas (each half arrives as an escaped lone
surrogate), send a lone surrogate outright, or put ``NaN``, ``Infinity`` or
``1e400`` (an overflowing float) in a tool call's input. Tools can meet such
values too (a file name that is not UTF-8 becomes lone surrogates). None of
these can be encoded as strict JSON in UTF-8, so a context or a session that
held one could never be sent to the model again.

* :func:`clean_text` joins surrogate pairs and replaces a lone surrogate with
  U+FFFD (the replacement character);
* :func:`clean_json` does that to every string of a JSON value (keys too) and
  replaces every non-finite number with ``null``;
* :class:`SurrogateJoiner` cleans streamed text piece by piece, holding back a
  trailing high surrogate until the next piece shows whether its pair follows;
* :func:`loads_clean` reads JSON someone else may have written (a session file)
  into a clean value, so a field that must be a number and held ``NaN`` is then
  null, which its reader refuses, and every string can be printed.

Nesting is bounded too. A tool call's input nested more than ``MAX_DEPTH``
arrays or objects deep would overflow the recursive walks of Python's own
encoder and of whatever else reads it, so :func:`strict_message` puts
``{TOO_DEEP: True}`` in its place (the executor answers the call with an error
naming the limit), and cuts anything else in a message nested deeper than that
(as null).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from typing import Any, TypeVar, cast

__all__ = [
    "MAX_DEPTH",
    "TOO_DEEP",
    "SurrogateJoiner",
    "clean_json",
    "clean_text",
    "deeper_than",
    "finite_number",
    "loads_clean",
    "strict_message",
]

MAX_DEPTH = 64  # arrays and objects inside each other in a tool call's input, the input object included
TOO_DEEP = "__too_deep__"  # the key of what replaces an input nested deeper
_MESSAGE_DEPTH = MAX_DEPTH + 4  # a message, its content list, a block, and its input
_SURROGATE = re.compile("[\ud800-\udfff]")
_T = TypeVar("_T")


def clean_text(text: str) -> str:
    """Return ``text`` with surrogate pairs joined into their character and lone surrogates as U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")


def clean_json(value: _T, *, max_depth: int | None = None) -> _T:
    """Return ``value`` (a JSON value) with every string cleaned and every NaN or infinity as None.

    With ``max_depth``, an array or object nested deeper than that becomes None as well.
    A value that needs no cleaning comes back as it was (the same object); otherwise a cleaned
    copy. Both walks are iterative, so no nesting depth the JSON parser accepts can overflow them.
    """
    if not _needs_cleaning(value, max_depth):
        return value
    return _cleaned_copy(value, max_depth)  # type: ignore[no-any-return]


def loads_clean(data: bytes | str) -> Any:
    """``data`` decoded as JSON and cleaned (:func:`clean_json`); ValueError or RecursionError when it is not JSON.

    Numbers are cleaned as they are decoded (``NaN``, ``Infinity`` and a float past 1e308 come out as
    None); the strings are walked only when the data could hold a lone surrogate: as UTF-8 bytes, only
    from a ``\\uD800``-style escape or an encoded surrogate (its first byte is 0xED).
    """
    if isinstance(data, bytes) and data[:1] == b"{" and b"\x00" not in data:  # UTF-8 (a BOM or UTF-16 starts
        text = data.decode("utf-8", "surrogatepass")  # otherwise), read as json.loads reads it
        try:
            value, end = _SCAN(text, 0)
        except StopIteration as err:
            raise json.JSONDecodeError("Expecting value", text, err.value) from None
        if end != len(text) and text[end:].strip():
            raise json.JSONDecodeError("Extra data", text, end)
        if b"\\ud" not in data and b"\\uD" not in data and b"\xed" not in data:
            return value
        return clean_json(value)
    return clean_json(json.loads(data, parse_constant=_no_number, parse_float=_finite_float))


def _no_number(_: str) -> None:
    return None


def _finite_float(literal: str) -> float | None:
    number = float(literal)
    return number if math.isfinite(number) else None


# The decoder's own scanner, called directly: ``JSONDecoder.decode`` adds a regex and checks around it per call.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.JSONDecoder(
    parse_constant=_no_number, parse_float=_finite_float
).scan_once  # type: ignore[attr-defined]  # set by JSONDecoder.__init__, missing from its stub


def finite_number(value: object) -> float | None:
    """``value`` as a float when it is a finite number (not a bool; an integer too large for a float is not)."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def deeper_than(value: Any, limit: int) -> bool:
    """True when ``value`` nests more than ``limit`` arrays or objects (itself included) inside each other."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list | tuple):
            if depth > limit:
                return True
            stack += ((v, depth + 1) for v in (item.values() if isinstance(item, dict) else item))
    return False


def strict_message(message: _T) -> _T:
    """``message`` (a Messages API message) cleaned (:func:`clean_json`) and bounded in depth.

    A ``tool_use`` block whose input nests deeper than ``MAX_DEPTH`` gets ``{TOO_DEEP: True}``
    as its input; anything else nested too deep becomes None.
    """
    value: Any = message
    content = value.get("content") if isinstance(value, dict) else None
    if isinstance(content, list) and any(_input_too_deep(block) for block in content):
        content = [{**b, "input": {TOO_DEEP: True}} if _input_too_deep(b) else b for b in content]
        value = {**value, "content": content}
    return cast(_T, clean_json(value, max_depth=_MESSAGE_DEPTH))


def _input_too_deep(block: Any) -> bool:
    return isinstance(block, dict) and block.get("type") == "tool_use" and deeper_than(block.get("input"), MAX_DEPTH)


def _needs_cleaning(value: Any, max_depth: int | None) -> bool:
    if max_depth is not None and deeper_than(value, max_depth):
        return True
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item) is not None:
                return True
        elif isinstance(item, float):
            if not math.isfinite(item):
                return True
        elif isinstance(item, dict):
            stack += item.keys()
            stack += item.values()
        elif isinstance(item, list | tuple):
            stack += item
    return False


def _cleaned_copy(value: Any, max_depth: int | None) -> Any:
    root: list[Any] = [None]
    # (item, the container it goes into, its key there, how many containers hold it)
    stack: list[tuple[Any, Any, Any, int]] = [(value, root, 0, 0)]
    limit = max_depth if max_depth is not None else math.inf
    while stack:
        item, into, key, depth = stack.pop()
        if isinstance(item, dict | list | tuple) and depth >= limit:
            into[key] = None
        elif isinstance(item, dict):
            copy: dict[Any, Any] = {}
            for k, v in item.items():
                k = clean_text(k) if isinstance(k, str) else k
                copy[k] = None  # a place kept in order, filled when its value is taken
                stack.append((v, copy, k, depth + 1))
            into[key] = copy
        elif isinstance(item, list | tuple):
            items: list[Any] = [None] * len(item)
            stack += ((v, items, i, depth + 1) for i, v in enumerate(item))
            into[key] = items
        elif isinstance(item, str):
            into[key] = clean_text(item)
        elif isinstance(item, float) and not math.isfinite(item):
            into[key] = None
        else:
            into[key] = item
    return root[0]


class SurrogateJoiner:
    """Cleans text that arrives in pieces, so a surrogate pair split across two pieces is joined."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, piece: str) -> str:
        """Take the next piece; return the clean text that can be shown now (maybe empty)."""
        text = self._held + piece
        self._held = ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._held = text[:-1], text[-1]
        return clean_text(text)

    def flush(self) -> str:
        """The text still held back at the end: a high surrogate whose pair never came, as U+FFFD."""
        held, self._held = self._held, ""
        return clean_text(held)
