"""Provides a small JSON Schema checker for tool arguments.

It covers what tool schemas use: ``type`` (object, string, integer, number,
boolean, array, null, or a list of them), ``properties``, ``required``,
``additionalProperties: false``, ``enum``, ``minimum``/``maximum`` and array
``items``. Anything else in a schema (an MCP server's: ``anyOf``, ``format``, a
keyword of a later draft) is left to the tool's own checking, never an error of
Chimera's: the checker refuses only what it understands to be wrong. A full
validator would be a dependency for a few dozen lines of need.
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
    "null": (type(None),),
}


def validate(value: Any, schema: dict[str, Any], where: str = "arguments") -> None:
    """Raise ToolInputError naming the first place where ``value`` breaks ``schema``."""
    if not isinstance(schema, dict):
        return
    expected = schema.get("type")
    kinds = [expected] if isinstance(expected, str) else expected if isinstance(expected, list) else []
    understood = kinds and all(isinstance(kind, str) and kind in _TYPES for kind in kinds)
    if understood and not any(_is(value, kind) for kind in kinds):
        wanted = " or ".join(_article(kind) for kind in kinds)
        raise ToolInputError(f"{where} must be {wanted}, not {_name(value)}")
    if isinstance(schema.get("enum"), list) and value not in schema["enum"]:
        choices = ", ".join(repr(c) for c in schema["enum"])
        raise ToolInputError(f"{where} must be one of {choices}, not {value!r}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if _number(schema.get("minimum")) and value < schema["minimum"]:
            raise ToolInputError(f"{where} must be at least {schema['minimum']}, not {value}")
        if _number(schema.get("maximum")) and value > schema["maximum"]:
            raise ToolInputError(f"{where} must be at most {schema['maximum']}, not {value}")
    if isinstance(value, dict):
        props = schema.get("properties", {})
        props = props if isinstance(props, dict) else {}
        required = schema.get("required", [])
        for key in required if isinstance(required, list) else []:
            if isinstance(key, str) and key not in value:
                raise ToolInputError(f"missing required argument {key!r}")
        if schema.get("additionalProperties") is False:
            extra = sorted(set(value) - set(props))
            if extra:
                known = ", ".join(props) or "none"
                raise ToolInputError(f"unknown argument {extra[0]!r} (known: {known})")
        for key, sub in props.items():
            if key in value:
                validate(value[key], sub, f"argument {key!r}")
    if isinstance(value, list) and isinstance(schema.get("items"), dict):
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{where}[{i}]")


def _is(value: Any, kind: str) -> bool:
    if isinstance(value, bool) and kind in ("integer", "number"):
        return False
    return isinstance(value, _TYPES[kind])


def _number(bound: object) -> bool:
    return isinstance(bound, int | float) and not isinstance(bound, bool)


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
