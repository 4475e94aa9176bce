"""Provides per-model prices and the cost of a response's usage.

Prices are US dollars per million tokens, matched by model family so that
dated and versioned names (``claude-sonnet-4-5-20250929``) find their row.
A model with no row (a local server's) is counted as free: its cost shows $0.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Price", "cost_of", "price_for"]


@dataclass(frozen=True, slots=True)
class Price:
    input: float
    output: float

    @property
    def cache_write(self) -> float:
        return self.input * 1.25

    @property
    def cache_read(self) -> float:
        return self.input * 0.1


# Family prefixes, most specific first. Claude 3 models are named version first (claude-3-5-haiku-...).
_PRICES: tuple[tuple[str, Price], ...] = (
    ("claude-opus-4-1", Price(15.0, 75.0)),
    ("claude-opus-4-0", Price(15.0, 75.0)),
    ("claude-opus-4-2", Price(15.0, 75.0)),  # claude-opus-4-20250514, Opus 4's dated name
    ("claude-opus", Price(5.0, 25.0)),
    ("claude-sonnet", Price(3.0, 15.0)),
    ("claude-haiku", Price(1.0, 5.0)),
    ("claude-3-opus", Price(15.0, 75.0)),
    ("claude-3-5-haiku", Price(0.8, 4.0)),
    ("claude-3-haiku", Price(0.25, 1.25)),
    ("claude-3", Price(3.0, 15.0)),  # the Claude 3.x Sonnets
)


def price_for(model: str) -> Price | None:
    """Return the price row for ``model``, or None when it is not a priced model."""
    name = model.lower()
    for prefix, price in _PRICES:
        if name.startswith(prefix):
            return price
    return None


def cost_of(
    model: str,
    *,
    input_tokens: int,
    output_tokens: int,
    cache_read_tokens: int = 0,
    cache_write_tokens: int = 0,
) -> float:
    """Return the dollar cost of one response's tokens on ``model``."""
    price = price_for(model)
    if price is None:
        return 0.0
    return (
        input_tokens * price.input
        + output_tokens * price.output
        + cache_read_tokens * price.cache_read
        + cache_write_tokens * price.cache_write
    ) / 1_000_000
