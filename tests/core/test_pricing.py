"""Prices by model name: dated, versioned and Claude 3 names find their row; unknown models are free."""

from __future__ import annotations

import pytest

from chimera.core.providers.pricing import cost_of


@pytest.mark.parametrize(
    ("model", "dollars"),
    [
        # A million input and a million output tokens: the row's two prices added up.
        ("claude-sonnet-4-5-20250929", 3 + 15),
        ("claude-opus-4-6", 5 + 25),
        ("claude-opus-4-20250514", 15 + 75),
        ("claude-opus-4-1", 15 + 75),
        ("claude-haiku-4-5", 1 + 5),
        ("claude-3-7-sonnet-latest", 3 + 15),
        ("claude-3-5-haiku-20241022", 0.8 + 4),
        ("claude-3-haiku-20240307", 0.25 + 1.25),
        ("claude-3-opus-20240229", 15 + 75),
        ("CLAUDE-SONNET-4-6", 3 + 15),
        ("qwen2.5-coder:7b", 0),
        ("llama3", 0),
    ],
)
def test_a_model_is_priced_at_its_familys_row(model: str, dollars: float) -> None:
    """Each name costs what its family costs per million tokens; a local model's name costs nothing."""
    assert cost_of(model, input_tokens=1_000_000, output_tokens=1_000_000) == pytest.approx(dollars)


def test_cache_reads_cost_a_tenth_and_writes_a_quarter_more() -> None:
    """Cached input is billed at 10% of the input price to read and 125% to write."""
    cost = cost_of(
        "claude-sonnet-4-6", input_tokens=0, output_tokens=0, cache_read_tokens=10**6, cache_write_tokens=10**6
    )
    assert cost == pytest.approx(3 * 0.1 + 3 * 1.25)
