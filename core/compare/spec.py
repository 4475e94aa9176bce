"""Provides ``VariantSpec`` and ``parse_specs``: what each variant of a comparison runs with.

A spec is ``key=value[,key=value]`` with the keys ``loop`` (react, plan,
reflexion, tot), ``model``, ``candidates``, ``reflect-every``, ``max-turns`` and
``label``. A variant without a label is named after what sets it apart (its
loop, or its model), numbered when two would share a name. An unknown key, a
bad value, a key given twice or two variants with one label is a ConfigError
naming the spec and the fix.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from chimera.core.errors import ConfigError
from chimera.core.loop_config import LOOPS

__all__ = ["KEYS", "VariantSpec", "parse_spec", "parse_specs"]

KEYS = ("loop", "model", "candidates", "reflect-every", "max-turns", "label")
_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,39}")
_MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/@-]{0,99}")


@dataclass(frozen=True, slots=True)
class VariantSpec:
    """One variant: its strategy, model (None: the configured one), limits and label."""

    label: str
    loop: str = "react"
    model: str | None = None
    candidates: int = 3
    reflect_every: int = 3
    max_turns: int = 50


def _whole(spec: str, key: str, value: str, *, low: int = 1, high: int = 1000) -> int:
    if not (value.isascii() and value.isdigit()) or not low <= int(value) <= high:
        raise ConfigError(f"--try {spec!r}: {key}={value!r} is not a whole number from {low} to {high}: give one")
    return int(value)


def parse_spec(spec: str) -> tuple[str | None, VariantSpec]:
    """The label the person gave (None when none), and the variant ``spec`` describes (labelled ``""``
    when none was given: :func:`parse_specs` names it)."""
    fields: dict[str, str] = {}
    for part in spec.split(","):
        key, eq, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not eq or not key or not value:
            raise ConfigError(
                f"--try {spec!r}: {part.strip()!r} is not key=value: write a spec as key=value[,key=value], "
                f"with keys {', '.join(KEYS)}"
            )
        if key not in KEYS:
            raise ConfigError(f"--try {spec!r}: the key {key!r} is unknown: use {', '.join(KEYS)}")
        if key in fields:
            raise ConfigError(f"--try {spec!r}: {key} is given twice: give each key once")
        fields[key] = value
    loop = fields.get("loop", "react")
    if loop not in LOOPS:
        raise ConfigError(f"--try {spec!r}: loop={loop!r} is unknown: use one of {', '.join(LOOPS)}")
    model = fields.get("model")
    if model is not None and not _MODEL.fullmatch(model):
        raise ConfigError(
            f"--try {spec!r}: model={model!r} is not a model name: give one word, such as claude-sonnet-4-5"
        )
    label = fields.get("label")
    if label is not None and not _LABEL.fullmatch(label):
        raise ConfigError(
            f"--try {spec!r}: label={label!r} cannot name a variant: use up to 40 letters, digits, '.', '_' or '-'"
        )
    variant = VariantSpec(
        label=label or "",
        loop=loop,
        model=model,
        candidates=_whole(spec, "candidates", fields.get("candidates", "3"), high=10),
        reflect_every=_whole(spec, "reflect-every", fields.get("reflect-every", "3")),
        max_turns=_whole(spec, "max-turns", fields.get("max-turns", "50")),
    )
    return label, variant


def parse_specs(specs: Sequence[str]) -> list[VariantSpec]:
    """The variants of ``--try`` specs, in order, each with a label of its own.

    ConfigError for no spec, a bad one, or two variants the person gave one label."""
    if not specs:
        raise ConfigError("nothing to compare: give each variant as --try key=value[,key=value]")
    parsed = [parse_spec(spec) for spec in specs]
    given = [label for label, _ in parsed if label is not None]
    for name in given:
        if given.count(name) > 1:
            raise ConfigError(f"two variants are labelled {name!r}: give each --try a label of its own")
    taken = set(given)
    variants = []
    for given_label, variant in parsed:
        label = given_label
        if label is None:
            label = _free(_default_label(variant), taken)
            taken.add(label)
        variants.append(replace(variant, label=label))
    return variants


def _default_label(variant: VariantSpec) -> str:
    if variant.model is not None:
        base = re.sub(r"[^A-Za-z0-9._-]", "-", variant.model)[:30]
        return base if variant.loop == "react" else f"{variant.loop}-{base}"
    return variant.loop


def _free(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"
