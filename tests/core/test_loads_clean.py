"""Reading JSON someone else wrote: the fast path that skips the cleaning walk gives what the walk gives."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chimera.core.strict_json import clean_json, loads_clean

SCALARS = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(st.characters(blacklist_categories=()))  # lone surrogates included
)
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner), max_leaves=20)
NUMBERS = st.builds(
    lambda digits, fraction, exponent: f"{'9' * digits}{fraction}{exponent}",
    st.sampled_from([1, 199, 200, 209, 210, 250, 299, 308, 309, 400]) | st.integers(1, 400),
    st.sampled_from(["", ".5"]),
    st.sampled_from(["", "e99", "e-99", "e60", "E+308", "e309", "e400", "e5"]),
)


@given(VALUES, st.booleans(), st.booleans())
def test_any_value_reads_back_clean_as_the_walk_would(value: Any, ascii_only: bool, record: bool) -> None:
    """Surrogates (escaped or encoded), NaN and infinities, however written, come back as the full cleaning
    gives them, in a record (an object: read on the fast path) or alone."""
    data = json.dumps({"v": value} if record else value, ensure_ascii=ascii_only).encode("utf-8", "surrogatepass")
    assert loads_clean(data) == clean_json(json.loads(data))


@given(NUMBERS)
def test_a_number_that_overflows_reads_back_as_null(number: str) -> None:
    """A number too large for a float is null, however many digits and whatever exponent spell it."""
    data = f'{{"n": {number}}}'.encode()
    assert loads_clean(data) == clean_json(json.loads(data))
