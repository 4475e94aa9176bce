"""Provides ``Redactor``: masking of secret values in whatever leaves the process, the second line of defence.

The first line is that no process Chimera runs can read the key at all (see
:mod:`chimera.core.credentials`). Masking catches what slips through anyway: a
``Redactor`` replaces every exact occurrence of a secret (of at least
``MIN_LENGTH`` characters; a shorter one would mask ordinary text) with
``[secret removed]``, in text, in JSON-ready values (an object's keys as well as
its values), in dataclass fields, and,
through :class:`StreamMasker`, in text that arrives in pieces, where a secret
may be cut across two of them. It cannot recognise a secret that was
transformed: encoded (base64, hex, URL-escaped), split over lines, reversed,
or only partly printed. So whoever shortens a text that may hold a secret masks
it first and cuts it after: a secret cut in two is no longer an exact occurrence,
and its first part would go out unmasked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Any, TypeVar

__all__ = ["MASK", "MIN_LENGTH", "Redactor", "StreamMasker"]

MASK = "[secret removed]"
MIN_LENGTH = 8

_T = TypeVar("_T")


class Redactor:
    """A set of secret values, and the masking of them. Its repr never shows them."""

    __slots__ = ("_secrets",)

    def __init__(self, secrets: Iterable[str | None] = ()) -> None:
        values = {s for s in secrets if s and len(s) >= MIN_LENGTH}
        self._secrets = tuple(sorted(values, key=len, reverse=True))  # a secret inside another: the longer wins

    def __repr__(self) -> str:
        return f"Redactor({len(self._secrets)} secrets)"

    def __bool__(self) -> bool:
        return bool(self._secrets)

    def mask(self, text: str) -> str:
        """``text`` with every occurrence of a secret replaced by ``MASK``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, MASK)
        return text

    def mask_value(self, value: _T) -> _T:
        """``value`` (text, or dicts, lists and tuples of them) masked; the same object when nothing was found."""
        return self._value(value) if self._secrets else value

    def mask_fields(self, obj: _T) -> _T:
        """A dataclass instance with every field masked (a copy), or ``obj`` itself when nothing was found."""
        if not self._secrets or not dataclasses.is_dataclass(obj) or isinstance(obj, type):
            return obj
        changes = {}
        for field in dataclasses.fields(obj):
            value = getattr(obj, field.name)
            masked = self._value(value)
            if masked is not value:
                changes[field.name] = masked
        return dataclasses.replace(obj, **changes) if changes else obj

    def stream(self) -> StreamMasker:
        """A masker for one text that arrives in pieces."""
        return StreamMasker(self)

    def partial_tail(self, text: str) -> int:
        """The length of the longest end of ``text`` that is the beginning of a secret (0 if none)."""
        best = 0
        for secret in self._secrets:
            start = max(0, len(text) - len(secret) + 1)  # a whole secret was masked already
            i = text.find(secret[0], start)
            while i != -1 and len(text) - i > best:
                if secret.startswith(text[i:]):
                    best = len(text) - i
                    break
                i = text.find(secret[0], i + 1)
        return best

    def _value(self, value: Any) -> Any:
        """``value`` masked: a copy of each container on the way to a masked text, the rest shared.

        Iterative, so no nesting depth overflows it.
        """
        if isinstance(value, str):
            return self.mask(value)
        if not isinstance(value, dict | list | tuple) or not self._holds_secret(value):
            return value
        # Post-order: a container is rebuilt once all its children are done.
        done: dict[int, Any] = {}
        stack: list[tuple[Any, bool]] = [(value, False)]
        while stack:
            item, children_done = stack.pop()
            if not children_done:
                stack.append((item, True))
                children = item.values() if isinstance(item, dict) else item
                stack += ((child, False) for child in children if isinstance(child, dict | list | tuple))
                continue
            done[id(item)] = self._rebuilt(item, done)
        return done[id(value)]

    def _rebuilt(self, item: Any, done: dict[int, Any]) -> Any:
        def masked(child: Any) -> Any:
            if isinstance(child, str):
                return self.mask(child)
            return done.get(id(child), child) if isinstance(child, dict | list | tuple) else child

        if isinstance(item, dict):
            pairs = [(masked(k) if isinstance(k, str) else k, masked(v)) for k, v in item.items()]
            if all(mk is k and mv is v for (mk, mv), (k, v) in zip(pairs, item.items(), strict=True)):
                return item
            return dict(pairs)
        values = [masked(v) for v in item]
        if all(m is v for m, v in zip(values, item, strict=True)):
            return item
        return values if isinstance(item, list) else tuple(values)

    def _holds_secret(self, value: Any) -> bool:
        stack = [value]
        while stack:
            item = stack.pop()
            if isinstance(item, str):
                if any(secret in item for secret in self._secrets):
                    return True
            elif isinstance(item, dict):
                stack += item.values()
                stack += (key for key in item if isinstance(key, str))
            elif isinstance(item, list | tuple):
                stack += item
        return False


class StreamMasker:
    """Masks a text that arrives in pieces: the end of a piece that could begin a secret waits for the next.

    ``feed`` returns what can be passed on now; ``flush`` what was held back, once the text is complete.
    """

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._carry = ""

    def feed(self, text: str) -> str:
        if not self._redactor:
            return text
        buffer = self._redactor.mask(self._carry + text)
        held = self._redactor.partial_tail(buffer)
        self._carry = buffer[len(buffer) - held :] if held else ""
        return buffer[: len(buffer) - held]

    def flush(self) -> str:
        rest, self._carry = self._carry, ""
        return rest
