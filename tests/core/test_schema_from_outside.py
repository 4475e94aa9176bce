"""Tool schemas Chimera did not write (an MCP server's) never break the argument checker: it refuses only what
it understands to be wrong (a type, a list of types, null, a required argument) and leaves the rest to the tool,
whatever the schema holds."""

from __future__ import annotations

import contextlib
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chimera.core.errors import ToolInputError
from chimera.core.tools.schema import validate

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=12,
)
keywords = st.sampled_from(["type", "properties", "required", "items", "enum", "minimum", "maximum", "anyOf"])
schemas = st.recursive(
    st.dictionaries(keywords, json_values, max_size=4),
    lambda inner: st.dictionaries(keywords, inner | json_values, max_size=4),
    max_leaves=10,
)


@given(schemas, json_values)
def test_any_schema_and_any_value_give_a_verdict_never_a_crash(schema: dict[str, Any], value: Any) -> None:
    """Whatever a server's schema holds, checking arguments against it passes or says why, in words."""
    with contextlib.suppress(ToolInputError):  # a verdict in words is a verdict; anything else fails the test
        validate(value, schema)


@pytest.mark.parametrize(
    ("schema", "value", "error"),
    [
        ({"type": ["string", "null"]}, None, None),
        ({"type": ["string", "null"]}, 3, "must be a string or a null, not"),
        ({"type": "null"}, None, None),
        ({"type": "string", "format": "uri", "anyOf": [{}]}, "x", None),
        ({"type": "object", "required": ["a"], "properties": {"a": {"type": "integer"}}}, {}, "missing required"),
        ({"type": "object", "properties": {"a": {"type": "integer"}}}, {"a": True}, "must be an integer, not"),
        ({"type": "wibble"}, 3, None),
    ],
)
def test_what_the_checker_understands_it_holds(schema: dict[str, Any], value: Any, error: str | None) -> None:
    """Types, lists of types and null are held; keywords it does not know, and types it does not know, pass."""
    if error is None:
        validate(value, schema)
    else:
        with pytest.raises(ToolInputError, match=error):
            validate(value, schema)
