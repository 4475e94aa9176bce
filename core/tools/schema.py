"""Provides a small JSON Schema checker for tool arguments.

It covers what tool schemas use: ``type`` (object, string, integer, number,
boolean, array), ``properties``, ``required``, ``additionalProperties: false``,
``enum``, ``minimum``/``maximum`` and array ``items``. A full validator would
be a dependency for a few dozen lines of need.
"""

from __future__ import annotations

from typing import Any

from chimera.core.errors import ToolInputError

__all__ = ["validate"]

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
}


def validate(value: Any, schema: dict[str, Any], where: str = "arguments") -> None:
    """Raise ToolInputError naming the first place where ``value`` breaks ``schema``."""
    expected = schema.get("type")
    if expected is not None:
        types = _TYPES[expected]
        is_bool = isinstance(value, bool)
        if not isinstance(value, types) or (is_bool and expected in {"integer", "number"}):
            raise ToolInputError(f"{where} must be {_article(expected)}, not {_name(value)}")
    if "enum" in schema and value not in schema["enum"]:
        choices = ", ".join(repr(c) for c in schema["enum"])
        raise ToolInputError(f"{where} must be one of {choices}, not {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolInputError(f"{where} must be at least {schema['minimum']}, not {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolInputError(f"{where} must be at most {schema['maximum']}, not {value}")
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        for key in schema.get("required", []):
            if key not in value:
                raise ToolInputError(f"missing required argument {key!r}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                known = ", ".join(props) or "none"
                raise ToolInputError(f"unknown argument {extra[0]!r} (known: {known})")
        for key, sub in props.items():
            if key in value:
                validate(value[key], sub, f"argument {key!r}")
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{where}[{i}]")


def _article(kind: str) -> str:
    return f"an {kind}" if kind[0] in "aeiou" else f"a {kind}"


def _name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        str: "a string",
        list: "an array",
        dict: "an object",
    }.get(type(value), type(value).__name__)
